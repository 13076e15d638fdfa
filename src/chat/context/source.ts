import type { Schema } from '../../http/index.js';
import type { Principal } from '../../kernel/index.js';
import type { ChatCompletionRequest } from '../request.js';

export type Citation = Schema<'Citation'>;

/** A retrieved passage: numbered [n] in the prompt and returned as the citation with that index. */
export interface SourcePassage {
  text: string;
  citation: Omit<Citation, 'index'>;
}

/** What a context source adds before routing. */
export interface ContextContribution {
  /** Plain context for the system message (e.g. what the user told the service about themselves). */
  notes?: string[];
  /** Passages to cite, best first: they enter the prompt in this order while the token budget lasts. */
  passages?: SourcePassage[];
  /** Counted in the response's memory_context.items_retrieved. */
  itemsRetrieved?: number;
  /** How long an answer built on this contribution may be cached (the shortest of all sources wins). */
  cacheTtlMs?: number;
}

/**
 * One source of context for a chat request (memory, documents, the web, …). Sources are registered
 * by name in a ContextRegistry; the chat pipeline knows none of them.
 */
export interface ContextSource {
  /** Unique; also the source's key in the response cache key. */
  readonly name: string;
  /** Whether this request asks for the source (e.g. use_rag). */
  applies(request: ChatCompletionRequest): boolean;
  /**
   * Cheap, before the cache lookup: a value that changes whenever what the source would read changes
   * (e.g. the user's memory version), so a cached answer is never stale against it. Undefined: the
   * source's answers are not personal (they do not enter the key).
   */
  version(principal: Principal, request: ChatCompletionRequest): Promise<string | undefined>;
  contribute(principal: Principal, request: ChatCompletionRequest, signal: AbortSignal): Promise<ContextContribution>;
  /**
   * After the answer (also a cached one), before it goes out: learn from the request (e.g. memory
   * extraction). The answer waits for the returned promise, so it must only store what it needs (a
   * queued job, in microseconds) and do the work behind; a failure is logged, never the answer's.
   */
  observe?(principal: Principal, request: ChatCompletionRequest): Promise<void> | void;
}
