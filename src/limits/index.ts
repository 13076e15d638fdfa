import type { Db } from '../storage/db.js';
import { PostgresRateLimitStore } from './adapters/postgres-rate-limit-store.js';
import { SqliteRateLimitStore } from './adapters/sqlite-rate-limit-store.js';
import type { RateLimitStore } from './types.js';

export { AuthFailureLimiter } from './auth-failure-limiter.js';
export { decide, RateLimiter, rateLimitError, rateLimitHeaders } from './rate-limiter.js';
export type { Limits, RateLimitDecision, RateLimitStore, WindowName, WindowState } from './types.js';

export function createRateLimitStore(db: Db): RateLimitStore {
  return db.dialect === 'sqlite'
    ? new SqliteRateLimitStore(db.sqlite, db.groupCommit)
    : new PostgresRateLimitStore(db.pool);
}
