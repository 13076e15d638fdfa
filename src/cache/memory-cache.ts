import { LRUCache } from 'lru-cache';
import { assertValidTtl, expiresAtFor, normaliseCreatedAt, serializeBody, wholeMs } from './cache-entry.js';
import type { CachedResponse, ResponseCache } from './response-cache.js';

export interface MemoryCacheOptions {
  /** Upper bound on stored bytes (UTF-8 JSON of each body plus its key). Default 64 MiB. */
  maxBytes?: number;
  /** Epoch-millisecond clock; injectable so tests can expire entries without sleeping. */
  now?: () => number;
}

export const DEFAULT_MEMORY_CACHE_MAX_BYTES = 64 * 1024 * 1024;

interface MemoryEntry {
  /** The body as JSON text: parsed afresh on every get, so callers can't mutate the cache. */
  json: string;
  createdAt: number;
  expiresAt: number;
}

/**
 * In-process LRU response cache, bounded by bytes rather than entry count
 * because completions vary from a few hundred bytes to hundreds of kilobytes.
 *
 * Expiry is checked here against `expiresAt` instead of lru-cache's own `ttl`:
 * lru-cache reads time through `performance.now()` with a 1 ms debounce and
 * treats a start time of 0 as "no TTL", which makes an injected clock awkward.
 * Our own check also gives both adapters the same boundary (alive while
 * now < expiresAt). Expired entries still count towards `maxBytes` until they
 * are read or fall off the LRU end, which keeps memory bounded either way.
 */
export function createMemoryCache(options: MemoryCacheOptions = {}): ResponseCache {
  const maxBytes = options.maxBytes ?? DEFAULT_MEMORY_CACHE_MAX_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new RangeError(`Memory cache maxBytes must be a positive integer, got ${maxBytes}`);
  }
  const now = options.now ?? Date.now;

  // An entry larger than maxBytes is not stored at all (lru-cache's default
  // maxEntrySize equals maxSize), so one huge answer can't flush the cache.
  const entries = new LRUCache<string, MemoryEntry>({
    maxSize: maxBytes,
    sizeCalculation: (entry, key) => Buffer.byteLength(entry.json, 'utf8') + Buffer.byteLength(key, 'utf8'),
  });

  return {
    async get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (wholeMs(now()) >= entry.expiresAt) {
        entries.delete(key);
        return undefined;
      }
      const hit: CachedResponse = { body: JSON.parse(entry.json) as unknown, createdAt: entry.createdAt };
      return hit;
    },

    async set(key, value, ttlMs) {
      assertValidTtl(ttlMs);
      const entry: MemoryEntry = {
        json: serializeBody(value.body),
        createdAt: normaliseCreatedAt(value.createdAt),
        expiresAt: expiresAtFor(now(), ttlMs),
      };
      entries.set(key, entry);
    },

    async delete(key) {
      entries.delete(key);
    },

    async close() {
      entries.clear();
    },
  };
}
