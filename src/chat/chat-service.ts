import type { AccountService, Principal } from '../accounts/index.js';
import {
  DEFAULT_CACHE_TTL_MS,
  type ResponseCache,
  responseCacheKey,
  WEB_GROUNDED_CACHE_TTL_MS,
} from '../cache/index.js';
import type { Clock } from '../clock/clock.js';
import { AppError } from '../errors/index.js';
import { MODELS, type ModelId } from '../models/catalog.js';
import type { Completion, Router, StreamPart } from '../providers/index.js';
import { type ContextHook, contextVersions, gatherContext } from './context-hooks.js';
import { type ChatCompletionRequest, toRoutedRequest } from './request.js';
import { newCompletionId, type ResponseMeta } from './wire.js';

export type CacheStatus = 'HIT' | 'MISS' | 'BYPASS';

/** What the response cache keeps of an answer: enough to replay it as JSON or as a stream. */
interface CachedAnswer {
  completion: Completion;
  citations?: ResponseMeta['citations'];
  memoryContext?: ResponseMeta['memoryContext'];
}

/** A request that passed limits and credits, ready to produce its answer. */
export interface PreparedChat {
  meta: ResponseMeta;
  cache: CacheStatus;
  /** Credits taken for this request (0 on a cache hit). */
  credits: number;
  /** Set on a cache hit. */
  cached?: Completion;
  /** Stores a successful answer in the cache (no-op on BYPASS). */
  remember(completion: Completion): Promise<void>;
  /** Gives the credits back: the request failed. Idempotent. */
  refund(): Promise<void>;
  generate(signal: AbortSignal): Promise<Completion>;
  stream(signal: AbortSignal): AsyncIterator<StreamPart>;
}

export interface ChatServiceDeps {
  router: Router;
  cache: ResponseCache;
  accounts: AccountService;
  hooks: readonly ContextHook[];
  clock: Clock;
  cacheTtlMs?: number;
  /** Why a model cannot be served right now (e.g. no local model file), or undefined. */
  unavailableReason(model: string): string | undefined;
}

/**
 * The chat pipeline after validation and limits: cache lookup → credits → context hooks
 * (memory, RAG, web) → routing to a provider. Credits are taken before generation (so the balance
 * can never go negative, even across replicas) and given back when generation fails.
 */
export class ChatService {
  readonly #deps: ChatServiceDeps;

  constructor(deps: ChatServiceDeps) {
    this.#deps = deps;
  }

  async prepare(principal: Principal, request: ChatCompletionRequest): Promise<PreparedChat> {
    const deps = this.#deps;
    const unavailable = deps.unavailableReason(request.model);
    if (unavailable) throw new AppError('SERVICE_UNAVAILABLE', unavailable, { model: request.model });

    const meta: ResponseMeta = {
      id: newCompletionId(),
      created: Math.floor(deps.clock() / 1000),
      model: request.model,
      memoryContext: { items_retrieved: 0, retrieval_time_ms: 0 },
      citations: request.use_rag || request.use_web_search ? [] : undefined,
    };
    const bypass = request.skip_cache === true;
    const key = bypass
      ? undefined
      : responseCacheKey(principal.account.id, {
          ...request,
          ...(await contextVersions(deps.hooks, principal, request)),
        });
    if (key) {
      const hit = await deps.cache.get(key);
      if (hit) {
        const cached = hit.body as CachedAnswer;
        if (cached.citations) meta.citations = cached.citations;
        if (cached.memoryContext) meta.memoryContext = cached.memoryContext;
        return this.#prepared({ meta, principal, request, cache: 'HIT', credits: 0, key, cached: cached.completion });
      }
    }

    const price = MODELS[request.model as ModelId]?.creditsPerRequest ?? 0;
    if (price > 0) {
      const charge = await deps.accounts.store.chargeCredits(principal.account.id, price);
      if (!charge.ok) {
        throw new AppError(
          'INSUFFICIENT_CREDITS',
          `${request.model} costs ${price} credits; the balance is ${charge.balance}`,
          {
            required: price,
            balance: charge.balance,
          },
        );
      }
    }
    return this.#prepared({ meta, principal, request, cache: bypass ? 'BYPASS' : 'MISS', credits: price, key });
  }

  #prepared(p: {
    meta: ResponseMeta;
    principal: Principal;
    request: ChatCompletionRequest;
    cache: CacheStatus;
    credits: number;
    key: string | undefined;
    cached?: Completion;
  }): PreparedChat {
    const { meta, principal, request, cache, credits, key, cached } = p;
    const deps = this.#deps;
    let refunded = false;
    let webGrounded = false;
    const routed = async (s: AbortSignal) => {
      const context = await gatherContext(deps.hooks, principal, request, s);
      meta.memoryContext = context.memoryContext;
      if (context.citations) meta.citations = context.citations;
      webGrounded = context.webGrounded;
      return toRoutedRequest(request, context.system);
    };
    return {
      meta,
      cache,
      credits,
      ...(cached ? { cached } : {}),
      async remember(completion) {
        if (!key) return;
        const ttl = webGrounded ? WEB_GROUNDED_CACHE_TTL_MS : (deps.cacheTtlMs ?? DEFAULT_CACHE_TTL_MS);
        const answer: CachedAnswer = { completion, citations: meta.citations, memoryContext: meta.memoryContext };
        await deps.cache.set(key, { body: answer, createdAt: deps.clock() }, ttl);
      },
      async refund() {
        if (refunded || credits === 0) return;
        refunded = true;
        await deps.accounts.store.refundCredits(principal.account.id, credits);
      },
      async generate(s) {
        return deps.router.generate(request.model, await routed(s), s);
      },
      stream(s) {
        let inner: AsyncIterator<StreamPart> | undefined;
        return {
          async next() {
            if (!inner) inner = deps.router.stream(request.model, await routed(s), s)[Symbol.asyncIterator]();
            return inner.next();
          },
          async return(value?: unknown) {
            await inner?.return?.(value);
            return { done: true, value: undefined };
          },
        };
      },
    };
  }
}
