import type BetterSqlite3 from 'better-sqlite3';

/**
 * SQLite statements that differ only in how many rows they take (a multi-row INSERT or upsert), each
 * prepared the first time its size is asked for and kept. Writers cut a batch with `fixedChunks` into a
 * few fixed sizes, so a handful of statements serve every batch.
 *
 * Why rows per statement rather than a statement per row: each `run()` of better-sqlite3 costs ~1-2 µs
 * of binding and stepping, and its result object, made in native code, outlives the scavenges of a busy
 * server (measured at 1,000 req/s: the SLA buckets' 3,000 single-row upserts a second were a third of what
 * a scavenge promoted; see docs/benchmarks.md, issue 30's fifth step).
 */
export class PreparedBySize {
  readonly #statements = new Map<number, BetterSqlite3.Statement>();
  readonly #prepare: (rows: number) => BetterSqlite3.Statement;

  constructor(prepare: (rows: number) => BetterSqlite3.Statement) {
    this.#prepare = prepare;
  }

  of(rows: number): BetterSqlite3.Statement {
    let statement = this.#statements.get(rows);
    if (!statement) {
      statement = this.#prepare(rows);
      this.#statements.set(rows, statement);
    }
    return statement;
  }
}
