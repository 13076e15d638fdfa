import type { Db } from '../storage/db.js';
import { acquireProcessLock } from '../storage/process-lock.js';
import { InProcessRateLimitStore } from './adapters/in-process-rate-limit-store.js';
import { PostgresRateLimitStore } from './adapters/postgres-rate-limit-store.js';
import { SqliteWindowsPersistence } from './adapters/sqlite-windows-persistence.js';
import type { RateLimitStore } from './types.js';

export { AuthFailureLimiter } from './auth-failure-limiter.js';
export { decide, RateLimiter, rateLimitError, rateLimitHeaders } from './rate-limiter.js';
export type { Limits, RateLimitDecision, RateLimitStore, WindowName, WindowState } from './types.js';

export interface RateLimitStoreOptions {
  /** A failed write-behind of the embedded store's windows (they stay in memory and are retried). */
  onError?: (err: unknown) => void;
}

/**
 * PostgreSQL: every admission is one round trip, exact across replicas. Embedded SQLite: this process
 * takes ownership of the database file (a second server on it refuses to start) and decides in memory.
 */
export function createRateLimitStore(db: Db, options: RateLimitStoreOptions = {}): RateLimitStore {
  if (db.dialect === 'postgres') return new PostgresRateLimitStore(db.pool);
  const lock = acquireProcessLock(db.sqlite.name);
  const store = new InProcessRateLimitStore(new SqliteWindowsPersistence(db.sqlite), options);
  return {
    admit: (accountId, limits, now, consume) => store.admit(accountId, limits, now, consume),
    async close() {
      try {
        await store.close();
      } finally {
        lock.release();
      }
    },
  };
}
