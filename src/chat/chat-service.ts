import type { ResponseCache } from '../cache/index.js';
import { responseCacheKey } from '../cache/index.js';
import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import { type CreditRefund, type CreditsPort, type Principal, payerOf } from '../kernel/index.js';
import {
  type Completion,
  CompletionAccumulator,
  firstImage,
  ProviderError,
  productError,
  type RoutedRequest,
  type Router,
  type StreamPart,
} from '../providers/index.js';
import { TRACING, traced } from '../tracing/index.js';
import type { ContextRegistry, PromptBudget } from './context/index.js';
import { type ChatCompletionRequest, DEFAULT_TEMPERATURE, toRoutedRequest } from './request.js';
import { newCompletionId, type ResponseMeta, replayAsParts } from './wire.js';

export type CacheStatus = 'HIT' | 'MISS' | 'BYPASS';

/** A part of an answer as the service hands it on: provider failures after the start are product errors. */
export type AnswerPart = Exclude<StreamPart, { type: 'error' }> | { type: 'failed'; error: AppError };

interface Admitted {
  meta: ResponseMeta;
  cache: CacheStatus;
  /** Credits taken for this request (0 on a cache hit). */
  credits: number;
}

export interface Answer extends Admitted {
  completion: Completion;
}

export interface StreamedAnswer extends Admitted {
  /** The parts, first one already produced; ends after a finish or a failed part. */
  parts: AsyncGenerator<AnswerPart, void, undefined>;
}

/** What the response cache keeps of an answer: enough to replay it as JSON or as a stream. */
interface CachedAnswer {
  completion: Completion;
  citations?: ResponseMeta['citations'];
  memoryContext?: ResponseMeta['memoryContext'];
}

export interface ChatServiceDeps {
  router: Pick<Router, 'generate' | 'stream'>;
  cache: ResponseCache;
  /** Atomic check-and-charge of the account and the key's budget; never below zero, never past the budget. */
  credits: CreditsPort;
  context: ContextRegistry;
  /** Where a context source's failure to observe an answer is reported (it never fails the answer). */
  warn?: (err: unknown, message: string) => void;
  clock: Clock;
  cacheTtlMs: number;
  /** Credits a request on this model costs. */
  price(model: string): number;
  /** The routed model's context window and the tokens to keep for the answer. */
  budget(request: ChatCompletionRequest): PromptBudget;
  /** Why a model cannot be served right now (e.g. no local model file), or undefined. */
  unavailableReason(model: string): string | undefined;
  /** Whether the model's route reads images (every target declared `vision`); text only when absent. */
  readsImages?(model: string): boolean;
  /** The temperature of a request on `model` that names none (its route's setting); undefined: the contract's. */
  defaultTemperature?(model: string): number | undefined;
}

/** An admitted request on its way: a class, so each outcome is made by one constructor, not a spread base. */
class Ticket implements Admitted {
  refunded = false;
  /** What gives the charge back (account and key), when there was one. */
  refund: CreditRefund | undefined;

  constructor(
    readonly principal: Principal,
    readonly request: ChatCompletionRequest,
    readonly meta: ResponseMeta,
    /** The shortest cache lifetime of the answer; a context source may shorten it. */
    public ttlMs: number,
    readonly cache: CacheStatus,
    readonly credits: number,
    readonly key: string | undefined,
    readonly cached: Completion | undefined,
  ) {}
}

/**
 * A chat request's whole life after validation, limits and tier checks: cache lookup → credits →
 * context sources → routing → generate or stream → refund on failure → cache. Credits are taken
 * before generation (so the balance never goes negative, across replicas too) and given back when
 * the answer fails before it started; a stream that started stays charged. Handlers only render.
 */
export class ChatService {
  readonly #deps: ChatServiceDeps;

  constructor(deps: ChatServiceDeps) {
    this.#deps = deps;
  }

  /** The temperature a request on `model` that names none is answered at: its route's, else the contract's 0.7. */
  temperatureFor(model: string): number {
    return this.#deps.defaultTemperature?.(model) ?? DEFAULT_TEMPERATURE;
  }

  /** Whether a request on `model` may hold images: its route reads them. */
  readsImages(model: string): boolean {
    return this.#deps.readsImages?.(model) ?? false;
  }

  /** A whole answer. Failures are AppErrors (or the signal's reason when the client left), after a refund. */
  async complete(principal: Principal, request: ChatCompletionRequest, signal: AbortSignal): Promise<Answer> {
    const ticket = await this.#admit(principal, request);
    if (ticket.cached) {
      await this.#observe(ticket);
      return answerOf(ticket, ticket.cached);
    }
    let completion: Completion;
    try {
      completion = await this.#deps.router.generate(request.model, await this.#route(ticket, signal), signal);
    } catch (err) {
      await this.#refund(ticket);
      throw failure(err, signal);
    }
    if (ticket.key) await this.#remember(ticket, ticket.key, completion);
    // Awaited only when a source returned work to wait for: an await of nothing still costs a promise.
    const observing = this.#observe(ticket);
    if (observing) await observing;
    return answerOf(ticket, completion);
  }

  /**
   * A streamed answer. Everything that can fail before the first part fails here, refunded, as for
   * complete(); after that, a failure is a `failed` part and the request stays charged.
   */
  async stream(principal: Principal, request: ChatCompletionRequest, signal: AbortSignal): Promise<StreamedAnswer> {
    const ticket = await this.#admit(principal, request);
    if (ticket.cached) {
      await this.#observe(ticket);
      return { ...admitted(ticket), parts: replay(ticket.cached) };
    }
    let inner: AsyncIterator<StreamPart> | undefined;
    let first: StreamPart;
    try {
      inner = this.#deps.router
        .stream(request.model, await this.#route(ticket, signal), signal)
        [Symbol.asyncIterator]();
      const next = await inner.next();
      if (next.done) throw new ProviderError('upstream', 'the stream ended before its first part');
      if (next.value.type === 'error') throw next.value.error;
      first = next.value;
    } catch (err) {
      await inner?.return?.();
      await this.#refund(ticket);
      throw failure(err, signal);
    }
    return { ...admitted(ticket), parts: this.#relay(ticket, first, inner, signal) };
  }

  async *#relay(
    ticket: Ticket,
    first: Exclude<StreamPart, { type: 'error' }>,
    inner: AsyncIterator<StreamPart>,
    signal: AbortSignal,
  ): AsyncGenerator<AnswerPart, void, undefined> {
    const answer = new CompletionAccumulator();
    try {
      let part: StreamPart = first;
      for (;;) {
        if (part.type === 'error') {
          yield { type: 'failed', error: productError(part.error) };
          return;
        }
        answer.add(part);
        yield part;
        if (part.type === 'finish') break;
        const next = await inner.next();
        if (next.done) throw new ProviderError('upstream', 'the stream ended without a finish part');
        part = next.value;
      }
    } catch (err) {
      const error = failure(err, signal);
      if (!(error instanceof AppError)) throw error;
      yield { type: 'failed', error };
      return;
    } finally {
      await inner.return?.();
    }
    const completion = answer.result();
    if (completion && ticket.key) await this.#remember(ticket, ticket.key, completion);
    // Before the stream's end is written: a client that saw the end knows the turn is stored.
    await this.#observe(ticket);
  }

  /**
   * The answer is made: sources that learn from a request (memory extraction) store what they need
   * before it goes out (a turn that was answered is never lost to a crash) and do their work behind it.
   */
  #observe(ticket: Ticket): Promise<unknown> | undefined {
    return this.#deps.context.observe(ticket.principal, ticket.request, (err) =>
      this.#deps.warn?.(err, 'a context source failed to observe an answer'),
    );
  }

  /** Tier-independent admission: is the model servable, is the answer cached, can the account pay. */
  async #admit(principal: Principal, request: ChatCompletionRequest): Promise<Ticket> {
    const deps = this.#deps;
    const unavailable = deps.unavailableReason(request.model);
    if (unavailable) throw new AppError('SERVICE_UNAVAILABLE', unavailable, { model: request.model });
    refuseUnreadImages(request, this.readsImages(request.model));
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
          context: await deps.context.versions(principal, request),
        });
    if (key) {
      const hit = await (TRACING.on ? tracedLookup(deps.cache, key) : deps.cache.get(key));
      if (hit) {
        const cached = hit.body as CachedAnswer;
        if (cached.citations) meta.citations = cached.citations;
        if (cached.memoryContext) meta.memoryContext = cached.memoryContext;
        return new Ticket(principal, request, meta, deps.cacheTtlMs, 'HIT', 0, key, cached.completion);
      }
    }
    const price = deps.price(request.model);
    let refund: CreditRefund | undefined;
    if (price > 0) {
      const payer = payerOf(principal);
      const charge = await (TRACING.on
        ? traced('credits charge', { 'pvai.credits': price }, () => deps.credits.charge(payer, price))
        : deps.credits.charge(payer, price));
      if (charge.ok) refund = charge.refund;
      else {
        throw new AppError(
          'INSUFFICIENT_CREDITS',
          `${request.model} costs ${price} credit${price === 1 ? '' : 's'}; the balance is ${charge.balance}`,
          { required: price, balance: charge.balance },
        );
      }
    }
    const ticket = new Ticket(
      principal,
      request,
      meta,
      deps.cacheTtlMs,
      bypass ? 'BYPASS' : 'MISS',
      price,
      key,
      undefined,
    );
    ticket.refund = refund;
    return ticket;
  }

  /** The context sources' contributions, then the request as the router takes it. */
  async #route(ticket: Ticket, signal: AbortSignal): Promise<RoutedRequest> {
    const { principal, request, meta } = ticket;
    const context = await this.#deps.context.gather(
      principal,
      request,
      request.messages,
      this.#deps.budget(request),
      signal,
    );
    meta.memoryContext = context.memoryContext;
    if (meta.citations) meta.citations = context.citations;
    if (context.cacheTtlMs !== undefined) ticket.ttlMs = Math.min(ticket.ttlMs, context.cacheTtlMs);
    return toRoutedRequest(request, context.system);
  }

  async #remember(ticket: Ticket, key: string, completion: Completion): Promise<void> {
    const { meta } = ticket;
    const answer: CachedAnswer = { completion, citations: meta.citations, memoryContext: meta.memoryContext };
    // The answer is made and paid for: a cache that cannot keep it now (its engine away) costs a later miss,
    // never this answer.
    await this.#deps.cache
      .set(key, { body: answer, createdAt: this.#deps.clock() }, ticket.ttlMs)
      .catch((err: unknown) => this.#deps.warn?.(err, 'the response cache could not keep an answer'));
  }

  async #refund(ticket: Ticket): Promise<void> {
    if (ticket.refunded || !ticket.refund) return;
    ticket.refunded = true;
    await this.#deps.credits.refund(ticket.refund);
  }
}

/**
 * The wire formats refuse an image the routed model cannot read, naming it as their client sent it; this holds
 * for every caller (a stored conversation continued on another model, say): a text-only engine never sees one.
 */
function refuseUnreadImages(request: ChatCompletionRequest, readsImages: boolean): void {
  if (readsImages) return;
  const at = firstImage(request.messages);
  if (!at) return;
  const field = `messages[${at[0]}].content[${at[1]}]`;
  throw new AppError('UNSUPPORTED_CONTENT', `${field} is an image, and ${request.model} reads text only`, {
    field,
    part_type: 'image_url',
  });
}

/** The response cache's lookup in a span of its own, saying whether it hit. */
function tracedLookup(cache: ResponseCache, key: string) {
  return traced('cache lookup', undefined, async (span) => {
    const hit = await cache.get(key);
    span.setAttribute('pvai.cache.hit', hit !== undefined);
    return hit;
  });
}

function admitted(ticket: Ticket): Admitted {
  return { meta: ticket.meta, cache: ticket.cache, credits: ticket.credits };
}

/** Made in one literal, not spread from admitted(): a spread copies through V8's generic path. */
function answerOf(ticket: Ticket, completion: Completion): Answer {
  return { meta: ticket.meta, cache: ticket.cache, credits: ticket.credits, completion };
}

async function* replay(completion: Completion): AsyncGenerator<AnswerPart, void, undefined> {
  yield* replayAsParts(completion);
}

/**
 * What a failed call throws: the signal's reason when the caller aborted (a client that left is no
 * failure), the product error of a provider failure, an AppError as it is; anything else is a defect
 * and goes up unchanged, to be logged with its stack and answered 500.
 */
function failure(err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (err instanceof ProviderError) return productError(err);
  return err;
}
