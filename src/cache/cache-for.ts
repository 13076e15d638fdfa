import type { Db } from '../storage/index.js';
import { createMemoryCache } from './memory-cache.js';
import { createPostgresCache } from './postgres-cache.js';
import type { ResponseCache } from './response-cache.js';

/**
 * The response cache for the service's database: replicas on PostgreSQL share one cache table (an answer
 * cached by one is a hit on every other, and a change that makes it stale is seen by all); the embedded default
 * keeps it in process memory, bounded by `maxBytes`.
 */
export function cacheFor(db: Db, options: { maxBytes: number; now: () => number }): ResponseCache {
  return db.dialect === 'postgres'
    ? createPostgresCache((sql, params) => db.pool.query(sql, params), { now: options.now })
    : createMemoryCache({ maxBytes: options.maxBytes, now: options.now });
}
