import type BetterSqlite3 from 'better-sqlite3';
import { fixedChunks, type TurnCommit, turnCommitOf } from '../../storage/index.js';
import { MINUTE_MS } from '../windows.js';
import type { PersistedWindows, WindowsChange, WindowsPersistence } from './in-process-rate-limit-store.js';

/**
 * Rows per multi-row statement, largest first: a commit's rows go out in as few statements as these sizes
 * allow (a turn of 20 admissions: one 16-row and one 4-row INSERT of events instead of 20 single ones). Each
 * run of a statement costs ~1-2 µs of binding and stepping beside its rows' own b-tree work, and the limiter's
 * group commit ran four per admission (issue 30's profile: 4.1 % of a cache miss's CPU).
 */
const CHUNKS = [64, 16, 4, 1] as const;

/** A statement taking `rows` rows of `tuple` placeholders, prepared once per size and kept. */
class MultiRow {
  readonly #statements = new Map<number, BetterSqlite3.Statement>();

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly sql: (values: string) => string,
    private readonly tuple: string,
  ) {}

  /** Runs the statement over `values`, `width` values per row, in the fewest CHUNKS-sized statements. */
  run(values: readonly unknown[], width: number): void {
    for (const [row, size] of fixedChunks(values.length / width, CHUNKS)) {
      this.#of(size).run(values.slice(row * width, (row + size) * width));
    }
  }

  #of(size: number): BetterSqlite3.Statement {
    let statement = this.#statements.get(size);
    if (!statement) {
      statement = this.db.prepare(this.sql(Array.from({ length: size }, () => this.tuple).join(', ')));
      this.#statements.set(size, statement);
    }
    return statement;
  }
}

/** The in-process limiter's windows in SQLite's rate_limit_events / rate_limit_counters tables. */
export class SqliteWindowsPersistence implements WindowsPersistence {
  readonly #events: BetterSqlite3.Statement;
  readonly #counter: BetterSqlite3.Statement;
  readonly #save: (changes: readonly WindowsChange[]) => void;
  readonly #write: (changes: readonly WindowsChange[]) => void;
  readonly turnCommit: TurnCommit;
  readonly #prune: (cutoffs: ReadonlyMap<string, number>) => void;

  constructor(db: BetterSqlite3.Database) {
    this.#events = db.prepare('SELECT at_ms FROM rate_limit_events WHERE account_id = ? AND at_ms > ? ORDER BY at_ms');
    this.#events.pluck();
    this.#counter = db.prepare(
      'SELECT count FROM rate_limit_counters WHERE account_id = ? AND window_name = ? AND period_start = ?',
    );
    this.#counter.pluck();
    const prune = db.prepare('DELETE FROM rate_limit_events WHERE account_id = ? AND at_ms <= ?');
    const clear = db.prepare('DELETE FROM rate_limit_events WHERE account_id = ?');
    const insertEvents = new MultiRow(
      db,
      (rows) => `INSERT INTO rate_limit_events (account_id, at_ms) VALUES ${rows}`,
      '(?, ?)',
    );
    const setCounters = new MultiRow(
      db,
      (rows) => `INSERT INTO rate_limit_counters (account_id, window_name, period_start, count) VALUES ${rows}
         ON CONFLICT (account_id, window_name, period_start) DO UPDATE SET count = excluded.count`,
      '(?, ?, ?, ?)',
    );
    const dropOld = db.prepare(
      `DELETE FROM rate_limit_counters WHERE account_id = ?
         AND ((window_name = 'day' AND period_start < ?) OR (window_name = 'month' AND period_start < ?))`,
    );
    this.turnCommit = turnCommitOf(db);
    this.#write = (changes: readonly WindowsChange[]) => {
      const events: unknown[] = [];
      const counters: unknown[] = [];
      for (const c of changes) {
        if (c.replaceLog) clear.run(c.accountId);
        for (const at of c.added) events.push(c.accountId, at);
        counters.push(c.accountId, 'day', c.dayStart, c.dayCount, c.accountId, 'month', c.monthStart, c.monthCount);
        if (c.dropOlderPeriods) dropOld.run(c.accountId, c.dayStart, c.monthStart);
      }
      insertEvents.run(events, 2);
      setCounters.run(counters, 4);
    };
    this.#save = db.transaction(this.#write);
    this.#prune = db.transaction((cutoffs: ReadonlyMap<string, number>) => {
      for (const [accountId, cutoff] of cutoffs) prune.run(accountId, cutoff);
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

  write(changes: readonly WindowsChange[]): void {
    this.#write(changes);
  }

  prune(cutoffs: ReadonlyMap<string, number>): void {
    this.#prune(cutoffs);
  }
}
