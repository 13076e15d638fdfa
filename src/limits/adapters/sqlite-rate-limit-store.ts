import type BetterSqlite3 from 'better-sqlite3';
import type { GroupCommit } from '../../storage/group-commit.js';
import type { AdmissionCounts, Limits, RateLimitStore } from '../types.js';
import { MINUTE_MS, utcDayStart, utcMonthStart } from '../windows.js';

/**
 * Admission as one synchronous better-sqlite3 transaction. Nothing else in this process runs while it
 * does (better-sqlite3 is synchronous) and BEGIN IMMEDIATE takes SQLite's write lock, so concurrent
 * requests, and other processes on the same file, are serialised.
 */
export class SqliteRateLimitStore implements RateLimitStore {
  readonly #admit: (accountId: string, limits: Limits, now: number, consume: boolean) => AdmissionCounts;

  constructor(db: BetterSqlite3.Database, groupCommit?: GroupCommit) {
    const prune = db.prepare('DELETE FROM rate_limit_events WHERE account_id = ? AND at_ms <= ?');
    const hasExpired = db.prepare('SELECT 1 FROM rate_limit_events WHERE account_id = ? AND at_ms <= ? LIMIT 1');
    const minute = db.prepare(
      'SELECT count(*) AS n, min(at_ms) AS oldest FROM rate_limit_events WHERE account_id = ? AND at_ms > ?',
    );
    const counter = db.prepare(
      'SELECT count FROM rate_limit_counters WHERE account_id = ? AND window_name = ? AND period_start = ?',
    );
    const insertEvent = db.prepare('INSERT INTO rate_limit_events (account_id, at_ms) VALUES (?, ?)');
    const bump = db.prepare(
      `INSERT INTO rate_limit_counters (account_id, window_name, period_start, count) VALUES (?, ?, ?, 1)
       ON CONFLICT (account_id, window_name, period_start) DO UPDATE SET count = count + 1`,
    );
    const dropOld = db.prepare(
      `DELETE FROM rate_limit_counters WHERE account_id = ?
         AND ((window_name = 'day' AND period_start < ?) OR (window_name = 'month' AND period_start < ?))`,
    );
    const readCounter = (accountId: string, window: string, start: number) =>
      (counter.get(accountId, window, start) as { count: number } | undefined)?.count ?? 0;

    const run = (accountId: string, limits: Limits, now: number, consume: boolean): AdmissionCounts => {
      const dayStart = utcDayStart(now);
      const monthStart = utcMonthStart(now);
      // Writes are what cost on SQLite (each is WAL traffic): prune only when something expired.
      if (consume && hasExpired.get(accountId, now - MINUTE_MS)) prune.run(accountId, now - MINUTE_MS);
      const m = minute.get(accountId, now - MINUTE_MS) as { n: number; oldest: number | null };
      const dayCount = readCounter(accountId, 'day', dayStart);
      const monthCount = readCounter(accountId, 'month', monthStart);
      const admitted = m.n < limits.rpm && dayCount < limits.rpd && monthCount < limits.monthly;
      if (admitted && consume) {
        insertEvent.run(accountId, now);
        bump.run(accountId, 'day', dayStart);
        bump.run(accountId, 'month', monthStart);
        // A new day (or month) just began for this account: drop the finished periods' counters.
        if (dayCount === 0 || monthCount === 0) dropOld.run(accountId, dayStart, monthStart);
      }
      return { admitted, minuteCount: m.n, minuteOldest: m.oldest, dayCount, monthCount };
    };
    const transaction = db.transaction(run);
    this.#admit = (accountId, limits, now, consume) => {
      if (!consume) return run(accountId, limits, now, consume);
      // Inside the shared transaction this is a savepoint: all or nothing, committed with the turn's others.
      groupCommit?.enter();
      return transaction.immediate(accountId, limits, now, consume);
    };
  }

  async admit(accountId: string, limits: Limits, now: number, consume: boolean): Promise<AdmissionCounts> {
    return this.#admit(accountId, limits, now, consume);
  }
}
