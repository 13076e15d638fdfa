import {
  type ChatCompletionRequest,
  type ContextContribution,
  type ContextSource,
  lastUserText,
} from '../chat/index.js';
import type { Principal } from '../kernel/index.js';
import type { MemoryService } from './memory-service.js';

/** Memories offered to one chat request at most (the prompt budget may take fewer). */
const MEMORY_K = 8;

/**
 * A question about the user as a whole ("what do you know about me?") shares no word or meaning with
 * any one fact, so the relevance floor would offer nothing: it gets the user's newest memories instead.
 */
const ABOUT_THE_USER =
  /\b(?:(?:know|remember|recall|stored|saved|have) (?:about|on) me|what do you (?:know|remember)|tell me about (?:me|myself)|who am i)\b/i;

/** A user without memories: shared, read only (assembleContext never changes a contribution). */
const NOTHING: ContextContribution = Object.freeze({
  notes: Object.freeze([]) as unknown as string[],
  itemsRetrieved: 0,
});

/**
 * Memory in chat, on unless `use_memory: false`: before the answer, the user's memories relevant to
 * their last message become notes in the system prompt (counted in `memory_context`); after it, their
 * last turn is queued durably for extraction (before the answer goes out), which runs behind it. The version is the user's memory
 * version, so a cached answer is never served after their memory changed. `use_memory: false`
 * neither reads nor writes.
 */
export function memoryContextSource(memory: MemoryService, k = MEMORY_K): ContextSource {
  const tenant = (principal: Principal, request: ChatCompletionRequest) => ({
    accountId: principal.account.id,
    userId: request.user_id,
  });
  // The version read for the cache key serves the same request's contribution: one read, not two (a
  // chat request is ~0.3 ms of CPU; each read ~15 µs on SQLite), and the answer is then computed from
  // the state its key names. Taken out when the contribution reads it, so the table holds only requests
  // between the two (a request that skips the cache never enters it): a WeakMap's dead entries stay in
  // its table until a full GC, which then spends its pause on them (ephemerons).
  const read = new WeakMap<ChatCompletionRequest, Promise<string>>();
  const readForKey = (principal: Principal, request: ChatCompletionRequest): Promise<string> => {
    let version = read.get(request);
    if (!version) {
      version = memory.version(tenant(principal, request));
      read.set(request, version);
    }
    return version;
  };
  const readForContribution = (principal: Principal, request: ChatCompletionRequest): Promise<string> => {
    const version = read.get(request);
    if (!version) return memory.version(tenant(principal, request));
    read.delete(request);
    return version;
  };
  return {
    name: 'memory',
    applies: (request) => request.use_memory !== false,
    // A user without memories gets nothing personal from this source: no version, so the answer may be
    // shared with the account's other users who have none either (the cache key then omits user_id).
    version: async (principal, request) => {
      const version = await readForKey(principal, request);
      return version === '0' ? undefined : version;
    },
    async contribute(principal, request, signal): Promise<ContextContribution> {
      const query = lastUserText(request);
      // Most end users have no memories: no query embedding, no search (version 0 means none).
      if (!query.trim()) return NOTHING;
      if ((await readForContribution(principal, request)) === '0') return NOTHING;
      const found = ABOUT_THE_USER.test(query)
        ? (await memory.list(tenant(principal, request))).slice(0, k)
        : await memory.search(tenant(principal, request), query, k, { floor: true, signal });
      return { notes: found.map((m) => m.content), itemsRetrieved: found.length };
    },
    // The turn the user just said (earlier turns of the conversation were observed when they were said).
    observe: (principal, request) => memory.observe(tenant(principal, request), lastUserText(request)),
  };
}
