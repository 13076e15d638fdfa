import type BetterSqlite3 from 'better-sqlite3';
import { MINUTE_MS } from '../windows.js';
import type { PersistedWindows, WindowsChange, WindowsPersistence } from './in-process-rate-limit-store.js';

/** The in-process limiter's windows in SQLite's rate_limit_events / rate_limit_counters tables. */
export class SqliteWindowsPersistence implements WindowsPersistence {
  readonly #events: BetterSqlite3.Statement;
  readonly #counter: BetterSqlite3.Statement;
  readonly #save: (changes: readonly WindowsChange[]) => void;

  constructor(db: BetterSqlite3.Database) {
    this.#events = db.prepare('SELECT at_ms FROM rate_limit_events WHERE account_id = ? AND at_ms > ? ORDER BY at_ms');
    this.#events.pluck();
    this.#counter = db.prepare(
      'SELECT count FROM rate_limit_counters WHERE account_id = ? AND window_name = ? AND period_start = ?',
    );
    this.#counter.pluck();
    const prune = db.prepare('DELETE FROM rate_limit_events WHERE account_id = ? AND at_ms <= ?');
    const clear = db.prepare('DELETE FROM rate_limit_events WHERE account_id = ?');
    const insertEvent = db.prepare('INSERT INTO rate_limit_events (account_id, at_ms) VALUES (?, ?)');
    const setCounter = db.prepare(
      `INSERT INTO rate_limit_counters (account_id, window_name, period_start, count) VALUES (?, ?, ?, ?)
       ON CONFLICT (account_id, window_name, period_start) DO UPDATE SET count = excluded.count`,
    );
    const dropOld = db.prepare(
      `DELETE FROM rate_limit_counters WHERE account_id = ?
         AND ((window_name = 'day' AND period_start < ?) OR (window_name = 'month' AND period_start < ?))`,
    );
    this.#save = db.transaction((changes: readonly WindowsChange[]) => {
      for (const c of changes) {
        if (c.replaceLog) clear.run(c.accountId);
        else if (c.prunedThrough !== null) prune.run(c.accountId, c.prunedThrough);
        for (const at of c.added) insertEvent.run(c.accountId, at);
        setCounter.run(c.accountId, 'day', c.dayStart, c.dayCount);
        setCounter.run(c.accountId, 'month', c.monthStart, c.monthCount);
        if (c.dropOlderPeriods) dropOld.run(c.accountId, c.dayStart, c.monthStart);
      }
    });
  }

  load(accountId: string, now: number, dayStart: number, monthStart: number): PersistedWindows {
    return {
      minute: this.#events.all(accountId, now - MINUTE_MS) as number[],
      dayCount: (this.#counter.get(accountId, 'day', dayStart) as number | undefined) ?? 0,
      monthCount: (this.#counter.get(accountId, 'month', monthStart) as number | undefined) ?? 0,
    };
  }

  save(changes: readonly WindowsChange[]): void {
    this.#save(changes);
  }
}
