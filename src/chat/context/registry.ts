import type { Principal } from '../../kernel/index.js';
import type { ChatMessage } from '../../providers/index.js';
import { TRACING, traced } from '../../tracing/index.js';
import type { ChatCompletionRequest } from '../request.js';
import { type AssembledContext, assembleContext, type PromptBudget } from './prompt.js';
import type { ContextContribution, ContextSource } from './source.js';

export interface GatheredContext extends AssembledContext {
  memoryContext: { items_retrieved: number; retrieval_time_ms: number };
  /** The shortest cache lifetime a contributing source asked for, if any did. */
  cacheTtlMs: number | undefined;
}

/**
 * The open set of context sources. Adding one (memory, documents, web, …) is `register(source)`
 * in the composition root: the cache key folds in its version by name, and its contribution goes
 * through the one prompt assembly (assembleContext) with the token budget.
 */
export class ContextRegistry {
  readonly #sources: ContextSource[] = [];

  constructor(sources: readonly ContextSource[] = []) {
    for (const source of sources) this.register(source);
  }

  register(source: ContextSource): void {
    if (this.#sources.some((s) => s.name === source.name)) {
      throw new Error(`a context source named ${source.name} is already registered`);
    }
    this.#sources.push(source);
  }

  /** The versions the cache key needs, by source name, from the sources that apply to this request. */
  async versions(principal: Principal, request: ChatCompletionRequest): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const source of this.#sources) {
      if (!source.applies(request)) continue;
      const version = await source.version(principal, request);
      if (version !== undefined) out[source.name] = version;
    }
    return out;
  }

  /**
   * Hands the answered request to every applicable source that learns from it; never throws. What the
   * sources store before the answer goes out is the returned promise (undefined when none stores anything,
   * so a request that gives nothing to learn creates no promise).
   */
  observe(
    principal: Principal,
    request: ChatCompletionRequest,
    log: (err: unknown) => void,
  ): Promise<unknown> | undefined {
    if (request.learn === false) return undefined;
    let stored: Array<Promise<unknown>> | undefined;
    for (const source of this.#sources) {
      if (!source.observe || !source.applies(request)) continue;
      try {
        const storing = source.observe(principal, request);
        if (storing) {
          stored ??= [];
          stored.push(storing.catch(log));
        }
      } catch (err) {
        log(err);
      }
    }
    if (!stored) return undefined;
    return stored.length === 1 ? stored[0] : Promise.all(stored);
  }

  /** Every applicable source's contribution, assembled into system messages and citations. */
  async gather(
    principal: Principal,
    request: ChatCompletionRequest,
    conversation: readonly ChatMessage[],
    budget: PromptBudget,
    signal: AbortSignal,
  ): Promise<GatheredContext> {
    // One applicable source (memory, most requests) is awaited alone: an array of them, and Promise.all,
    // only when a second one applies.
    let first: ContextSource | undefined;
    let several: ContextSource[] | undefined;
    for (const source of this.#sources) {
      if (!source.applies(request)) continue;
      if (!first) first = source;
      else if (several) several.push(source);
      else several = [first, source];
    }
    if (!first) return { system: [], citations: [], memoryContext: NO_MEMORY, cacheTtlMs: undefined };
    const started = performance.now();
    const contributions = several
      ? await Promise.all(
          several.map((s) =>
            TRACING.on ? tracedContribution(s, principal, request, signal) : s.contribute(principal, request, signal),
          ),
        )
      : [
          await (TRACING.on
            ? tracedContribution(first, principal, request, signal)
            : first.contribute(principal, request, signal)),
        ];
    let itemsRetrieved = 0;
    let cacheTtlMs: number | undefined;
    for (const c of contributions) {
      itemsRetrieved += c.itemsRetrieved ?? 0;
      if (c.cacheTtlMs !== undefined)
        cacheTtlMs = cacheTtlMs === undefined ? c.cacheTtlMs : Math.min(cacheTtlMs, c.cacheTtlMs);
    }
    const { system, citations } = assembleContext(contributions, conversation, budget);
    const retrievalMs = Math.round(performance.now() - started);
    return {
      system,
      citations,
      memoryContext: { items_retrieved: itemsRetrieved, retrieval_time_ms: retrievalMs },
      cacheTtlMs,
    };
  }
}

/** One source's contribution in a span of its own (`context {name}`), with how many items it retrieved. */
function tracedContribution(
  source: ContextSource,
  principal: Principal,
  request: ChatCompletionRequest,
  signal: AbortSignal,
): Promise<ContextContribution> {
  return traced(`context ${source.name}`, { 'pvai.context.source': source.name }, async (span) => {
    const contribution = await source.contribute(principal, request, signal);
    span.setAttribute('pvai.context.items', contribution.itemsRetrieved ?? contribution.passages?.length ?? 0);
    return contribution;
  });
}

const NO_MEMORY = Object.freeze({ items_retrieved: 0, retrieval_time_ms: 0 });
