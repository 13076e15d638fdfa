import type BetterSqlite3 from 'better-sqlite3';

/** A store that writes what one event-loop turn decided, inside the turn's one transaction. */
export interface TurnWriter {
  /** Writes this store's pending changes; runs inside the turn's transaction. A throw rolls the whole turn back. */
  writeTurn(): void;
  /** The turn's transaction committed: everything `writeTurn` wrote is stored. */
  turnStored(): void;
  /** The turn's transaction failed and was rolled back: nothing of it is stored. */
  turnFailed(err: unknown): void;
}

/**
 * The group commit of an embedded database: every store that decided something in this event-loop turn
 * (the rate limiter's admissions, the credit ledger's charges) writes it in one transaction at the end of
 * the turn (a `setImmediate`), and each learns the outcome after it. One commit instead of one per store:
 * a SQLite commit in WAL mode costs ~12-20 µs beyond its statements (measured with better-sqlite3 12 on
 * this machine: the limiter's and the ledger's writes 42-62 µs as two transactions, 33-36 µs as one), and
 * at 1,000 req/s most turns carry one request, so each request paid for two commits.
 */
export class TurnCommit {
  readonly #sqlite: BetterSqlite3.Database;
  #writers: TurnWriter[] = [];
  #immediate: NodeJS.Immediate | undefined;

  constructor(sqlite: BetterSqlite3.Database) {
    this.#sqlite = sqlite;
  }

  /** Asks for `writer`'s part in the commit at the end of this turn (once per turn however often asked). */
  schedule(writer: TurnWriter): void {
    if (!this.#writers.includes(writer)) this.#writers.push(writer);
    this.#immediate ??= setImmediate(() => this.#commit());
  }

  /** Takes `writer` out of this turn's commit (it is closing and has written what it had). */
  withdraw(writer: TurnWriter): void {
    this.#writers = this.#writers.filter((w) => w !== writer);
    if (this.#writers.length === 0 && this.#immediate) {
      clearImmediate(this.#immediate);
      this.#immediate = undefined;
    }
  }

  #commit(): void {
    const writers = this.#writers;
    this.#writers = [];
    this.#immediate = undefined;
    try {
      this.#write(writers);
    } catch (err) {
      for (const writer of writers) writer.turnFailed(err);
      return;
    }
    for (const writer of writers) writer.turnStored();
  }

  /**
   * BEGIN, every writer's part, COMMIT; ROLLBACK when any of it threw. `exec` rather than better-sqlite3's
   * `transaction()`, whose BEGIN and COMMIT are prepared statements run with `run()`: at 1,000 req/s a turn
   * carries about one request, so those were two result objects a request, made in native code, that
   * outlived their scavenge (seen in a heap profile that keeps only what no scavenge collected). The cost is the
   * same (~11 µs a turn either way, measured). A turn runs from `setImmediate`, never inside another transaction.
   */
  #write(writers: readonly TurnWriter[]): void {
    const sqlite = this.#sqlite;
    sqlite.exec('BEGIN');
    try {
      for (const writer of writers) writer.writeTurn();
      sqlite.exec('COMMIT');
    } catch (err) {
      if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
      throw err;
    }
  }
}

const commits = new WeakMap<BetterSqlite3.Database, TurnCommit>();

/** The turn commit of a SQLite connection: one per connection, shared by every store that writes through it. */
export function turnCommitOf(sqlite: BetterSqlite3.Database): TurnCommit {
  let commit = commits.get(sqlite);
  if (!commit) {
    commit = new TurnCommit(sqlite);
    commits.set(sqlite, commit);
  }
  return commit;
}
