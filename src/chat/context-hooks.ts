import type { Principal } from '../accounts/index.js';
import type { ChatCompletionRequest } from './request.js';

/** A citation as the response carries it (decisions.md). */
export interface Citation {
  index: number;
  source: 'document' | 'web';
  title: string;
  snippet: string;
  score: number;
  document_id?: string;
  chunk_id?: string;
  url?: string;
}

/** What a context hook adds before routing. */
export interface ContextContribution {
  /** Extra system messages placed before the conversation (retrieved memory, document chunks, web results). */
  system?: string[];
  citations?: Citation[];
  /** For memory_context: how many items were retrieved. */
  itemsRetrieved?: number;
  /** Web-grounded answers are cached for a shorter time. */
  webGrounded?: boolean;
}

/**
 * The seam for memory, RAG and web grounding: each runs before routing and may add context.
 * None is registered yet; the pipeline already threads their results into the prompt, the
 * citations, memory_context and the cache key.
 */
export interface ContextHook {
  readonly name: 'memory' | 'rag' | 'web';
  /** Whether the request asks for this hook (e.g. use_rag). */
  applies(request: ChatCompletionRequest): boolean;
  /**
   * Cheap, before the cache lookup: a value that changes whenever what the hook would read changes
   * (e.g. the user's memory version), so a cached answer is never stale against it.
   */
  version(principal: Principal, request: ChatCompletionRequest): Promise<string | undefined>;
  contribute(principal: Principal, request: ChatCompletionRequest, signal: AbortSignal): Promise<ContextContribution>;
}

export interface GatheredContext {
  system: string[];
  citations: Citation[] | undefined;
  memoryContext: { items_retrieved: number; retrieval_time_ms: number };
  webGrounded: boolean;
}

/** The versions the cache key needs, from the hooks that apply to this request. */
export async function contextVersions(
  hooks: readonly ContextHook[],
  principal: Principal,
  request: ChatCompletionRequest,
): Promise<{ memory_version?: string; documents_version?: string }> {
  const out: { memory_version?: string; documents_version?: string } = {};
  for (const hook of hooks) {
    if (!hook.applies(request)) continue;
    const version = await hook.version(principal, request);
    if (version === undefined) continue;
    if (hook.name === 'memory') out.memory_version = version;
    if (hook.name === 'rag') out.documents_version = version;
  }
  return out;
}

export async function gatherContext(
  hooks: readonly ContextHook[],
  principal: Principal,
  request: ChatCompletionRequest,
  signal: AbortSignal,
): Promise<GatheredContext> {
  const started = performance.now();
  const applicable = hooks.filter((hook) => hook.applies(request));
  const contributions = await Promise.all(applicable.map((hook) => hook.contribute(principal, request, signal)));
  const citations = contributions.flatMap((c) => c.citations ?? []).map((c, i) => ({ ...c, index: i + 1 }));
  const asksForCitations = Boolean(request.use_rag || request.use_web_search);
  return {
    system: contributions.flatMap((c) => c.system ?? []),
    citations: asksForCitations ? citations : undefined,
    memoryContext: {
      items_retrieved: contributions.reduce((n, c) => n + (c.itemsRetrieved ?? 0), 0),
      retrieval_time_ms: applicable.length > 0 ? Math.round(performance.now() - started) : 0,
    },
    webGrounded: contributions.some((c) => c.webGrounded),
  };
}
