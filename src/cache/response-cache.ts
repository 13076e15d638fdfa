/**
 * The response cache port: stores finished chat completions so an identical
 * request (same account, same answer-relevant fields — see cache-key.ts) can
 * be answered without running the model again.
 *
 * Adapters: createMemoryCache (in-process, the embedded default) and
 * createPostgresCache (shared by replicas). Both pass the same contract suite
 * in test/cache/response-cache.contract.ts.
 */

/**
 * One cached answer. `body` is the full `chat.completion` JSON object; it is
 * kept as generic JSON because the chat pipeline replays it either as a JSON
 * response or re-chunked as a stream.
 */
export interface CachedResponse {
  body: unknown;
  /** Epoch milliseconds at which the answer was produced (set by the caller). */
  createdAt: number;
}

export interface ResponseCache {
  /**
   * The entry for `key`, or undefined on a miss or once its TTL has elapsed.
   * Every call returns a fresh copy: mutating it never changes the cache.
   */
  get(key: string): Promise<CachedResponse | undefined>;
  /**
   * Stores (or replaces) `key`; the entry expires `ttlMs` after this call.
   * The value is copied, so later mutation by the caller has no effect.
   * Rejects with RangeError unless ttlMs is a positive finite number, and with
   * TypeError if `body` cannot be serialized as JSON.
   */
  set(key: string, value: CachedResponse, ttlMs: number): Promise<void>;
  /** Removes `key`; deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /**
   * Releases what the adapter owns (timers, memory). Idempotent. It never
   * closes resources handed in by the caller, such as a database pool.
   */
  close(): Promise<void>;
}

/** How long an ordinary answer stays cached. */
export const DEFAULT_CACHE_TTL_MS = 3_600_000;
