import type BetterSqlite3 from 'better-sqlite3';
import { MultiRow, type StagingLog, stagingLogOf, type TurnCommit, turnCommitOf } from '../../storage/index.js';
import { minuteCutoff } from '../admission-rule.js';
import { utcDayStart, utcMonthStart } from '../windows.js';
import type { Admission, PersistedWindows, WindowsPersistence } from './in-process-rate-limit-store.js';

/**
 * Rows per multi-row statement, largest first: a write's rows go out in as few statements as these sizes
 * allow (20 admission times: one 16-row and one 4-row INSERT instead of 20 single ones; each run of a
 * statement costs ~1-2 µs of binding and stepping beside its rows' own b-tree work).
 */
const CHUNKS = [64, 16, 4, 1] as const;

function countOne(counts: Map<number, number>, period: number): void {
  counts.set(period, (counts.get(period) ?? 0) + 1);
}

/**
 * The in-process limiter's windows in SQLite's rate_limit_events / rate_limit_counters tables. A turn's
 * admissions go to the staging log (one row for the turn, at the log's end) and from there, a generation later
 * and sorted by account, to the tables: an admission time per row, and the day's and month's counters
 * added to. Written straight away in each turn, an admission touched two b-tree pages of its account
 * (~25 µs at 1,000 busy accounts); a generation (2 s) later, an account's pages are written once for all its
 * admissions of the generation.
 */
export class SqliteWindowsPersistence implements WindowsPersistence {
  readonly #events: BetterSqlite3.Statement;
  readonly #counter: BetterSqlite3.Statement;
  readonly #prune: (cutoffs: ReadonlyMap<string, number>) => void;
  readonly #dropOlder: (periods: ReadonlyMap<string, readonly [number, number]>) => void;
  readonly #staged: StagingLog<Admission>;
  readonly turnCommit: TurnCommit;

  constructor(db: BetterSqlite3.Database) {
    this.#events = db.prepare('SELECT at_ms FROM rate_limit_events WHERE account_id = ? AND at_ms > ? ORDER BY at_ms');
    this.#events.pluck();
    this.#counter = db.prepare(
      'SELECT count FROM rate_limit_counters WHERE account_id = ? AND window_name = ? AND period_start = ?',
    );
    this.#counter.pluck();
    const prune = db.prepare('DELETE FROM rate_limit_events WHERE account_id = ? AND at_ms <= ?');
    const dropOlder = db.prepare(
      `DELETE FROM rate_limit_counters WHERE account_id = ?
         AND ((window_name = 'day' AND period_start < ?) OR (window_name = 'month' AND period_start < ?))`,
    );
    this.#dropOlder = db.transaction((periods: ReadonlyMap<string, readonly [number, number]>) => {
      for (const [accountId, [dayStart, monthStart]] of periods) dropOlder.run(accountId, dayStart, monthStart);
    });
    /** `sql(tuples)` prepared for each number of rows, `tuple` repeated as their placeholders. */
    const multiRow = (sql: (tuples: string) => string, tuple: string, width: number) =>
      new MultiRow((rows) => db.prepare(sql(Array.from({ length: rows }, () => tuple).join(', '))), width, CHUNKS);
    const insertEvents = multiRow(
      (rows) => `INSERT INTO rate_limit_events (account_id, at_ms) VALUES ${rows}`,
      '(?, ?)',
      2,
    );
    const addToCounters = multiRow(
      (rows) => `INSERT INTO rate_limit_counters (account_id, window_name, period_start, count) VALUES ${rows}
         ON CONFLICT (account_id, window_name, period_start) DO UPDATE SET count = rate_limit_counters.count + excluded.count`,
      '(?, ?, ?, ?)',
      4,
    );
    this.turnCommit = turnCommitOf(db);
    this.#staged = stagingLogOf<Admission>(db, {
      name: 'admissions',
      key: (admission) => admission[0],
      // Sorted by account: one account's admissions are side by side, so its counters are added to once.
      write: (admissions) => {
        const events: unknown[] = [];
        const counters: unknown[] = [];
        let i = 0;
        while (i < admissions.length) {
          const accountId = (admissions[i] as Admission)[0];
          const days = new Map<number, number>();
          const months = new Map<number, number>();
          for (; i < admissions.length && (admissions[i] as Admission)[0] === accountId; i++) {
            const at = (admissions[i] as Admission)[1];
            events.push(accountId, at);
            countOne(days, utcDayStart(at));
            countOne(months, utcMonthStart(at));
          }
          for (const [start, count] of days) counters.push(accountId, 'day', start, count);
          for (const [start, count] of months) counters.push(accountId, 'month', start, count);
        }
        insertEvents.run(events);
        addToCounters.run(counters);
      },
    });
    this.#prune = db.transaction((cutoffs: ReadonlyMap<string, number>) => {
      for (const [accountId, cutoff] of cutoffs) prune.run(accountId, cutoff);
    });
  }

  load(accountId: string, now: number, dayStart: number, monthStart: number): PersistedWindows {
    if (this.#staged.hasPending(accountId)) this.#staged.drainNow();
    return {
      minute: this.#events.all(accountId, minuteCutoff(now)) as number[],
      dayCount: (this.#counter.get(accountId, 'day', dayStart) as number | undefined) ?? 0,
      monthCount: (this.#counter.get(accountId, 'month', monthStart) as number | undefined) ?? 0,
    };
  }

  stage(admissions: readonly Admission[]): void {
    this.#staged.stage(admissions);
  }

  committed(): void {
    this.#staged.committed();
  }

  rolledBack(): void {
    this.#staged.rolledBack();
  }

  append(admissions: readonly Admission[]): void {
    this.#staged.append(admissions);
  }

  drainNow(): void {
    this.#staged.drainNow();
  }

  prune(cutoffs: ReadonlyMap<string, number>): void {
    this.#prune(cutoffs);
  }

  dropOlderPeriods(periods: ReadonlyMap<string, readonly [number, number]>): void {
    this.#dropOlder(periods);
  }
}
