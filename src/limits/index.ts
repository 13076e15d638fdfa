import type { Clock } from '../clock/index.js';
import type { Db } from '../storage/index.js';
import { InProcessAttemptCounter } from './adapters/in-process-attempt-counter.js';
import { InProcessRateLimitStore } from './adapters/in-process-rate-limit-store.js';
import { PostgresRateLimitStore } from './adapters/postgres-rate-limit-store.js';
import { SqlAttemptCounter } from './adapters/sql-attempt-counter.js';
import { SqliteWindowsPersistence } from './adapters/sqlite-windows-persistence.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import type { RateLimitStore } from './types.js';
import { MINUTE_MS } from './windows.js';

export { ApiAdmission } from './admission.js';
export type { AttemptCounter } from './attempt-counter.js';
export { AuthFailureLimiter } from './auth-failure-limiter.js';
export { RateLimiter } from './rate-limiter.js';

export {
  SignInThrottle,
  storedSignInThrottle,
} from './sign-in-throttle.js';
export type { RateLimitDecision, RateLimitStore, WindowName, WindowState } from './types.js';
export { utcMonthStart } from './windows.js';
export { InProcessAttemptCounter, SqlAttemptCounter };

export interface RateLimitStoreOptions {
  /** A failed write of the embedded store's windows (they stay in memory and are written again). */
  onError?: (err: unknown) => void;
}

/**
 * PostgreSQL: every admission is one round trip, exact across replicas. Embedded SQLite: the server owns
 * the database file (openDb's `owner`; a second server on it refuses to start) and decides in memory.
 */
export function createRateLimitStore(db: Db, options: RateLimitStoreOptions = {}): RateLimitStore {
  if (db.dialect === 'postgres') return new PostgresRateLimitStore(db.pool);
  if (!db.owned) throw new Error('rate limiting on SQLite needs the database opened with owner: true');
  return new InProcessRateLimitStore(new SqliteWindowsPersistence(db.sqlite), options);
}

/**
 * Failed authentications per address: in the table on PostgreSQL, shared by replicas; in memory on the
 * embedded SQLite, where one server owns the database, so memory is exact and a flood of bad keys writes
 * nothing.
 */
export function createAuthFailureLimiter(db: Db, limitPerMinute: number, clock: Clock): AuthFailureLimiter {
  const counter =
    db.dialect === 'postgres'
      ? new SqlAttemptCounter(db, { scope: 'auth', windowMs: MINUTE_MS })
      : new InProcessAttemptCounter({ windowMs: MINUTE_MS });
  return new AuthFailureLimiter(counter, limitPerMinute, clock);
}
