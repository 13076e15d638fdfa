import type BetterSqlite3 from 'better-sqlite3';

/**
 * Group commit for SQLite bookkeeping writes. On SQLite every commit is a WAL write of each page the
 * transaction touched; credit charges and refunds touch the same few pages on every chat request.
 * Writers that opt in share one IMMEDIATE transaction per event-loop turn, committed right after it
 * (setImmediate), so N charges made in one turn cost one commit instead of N.
 *
 * Conditional updates stay exact: better-sqlite3 is synchronous, so they still run one after another
 * inside the shared transaction (a transaction() inside it becomes a savepoint). Other writes issued on
 * the same connection while it is open (in the same turn) join it and commit with it, at the end of that
 * turn. What a crash can lose is the last turn's writes (well under a millisecond of work); writes made
 * when no shared transaction is open commit on their own, as before.
 */
export class GroupCommit {
  readonly #db: BetterSqlite3.Database;
  readonly #onError: (err: unknown) => void;
  #open = false;

  constructor(db: BetterSqlite3.Database, onError: (err: unknown) => void = () => undefined) {
    this.#db = db;
    this.#onError = onError;
  }

  /** Joins the shared transaction, opening it (and scheduling its commit) when there is none. */
  enter(): void {
    if (this.#open || this.#db.inTransaction) return;
    this.#db.exec('BEGIN IMMEDIATE');
    this.#open = true;
    setImmediate(() => this.commit());
  }

  /** Commits the shared transaction now (also called before closing the database). */
  commit(): void {
    if (!this.#open) return;
    this.#open = false;
    try {
      if (this.#db.inTransaction) this.#db.exec('COMMIT');
    } catch (err) {
      try {
        if (this.#db.inTransaction) this.#db.exec('ROLLBACK');
      } catch {
        // nothing left to roll back
      }
      this.#onError(err);
    }
  }
}
