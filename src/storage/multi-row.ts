import type BetterSqlite3 from 'better-sqlite3';
import { fixedChunks } from './db.js';

/**
 * A SQLite statement that takes several rows at once (a multi-row INSERT or upsert), prepared once for each
 * of a few fixed sizes: `run` cuts a batch's values into the fewest statements those sizes allow (20 rows
 * with sizes 16, 4, 1: two statements instead of twenty).
 *
 * Why rows per statement rather than a statement per row: each `run()` of better-sqlite3 costs ~1-2 µs
 * of binding and stepping beside its rows' own b-tree work, and its result object, made in native code,
 * outlives the scavenges of a busy server (measured at 1,000 req/s: the SLA buckets' 3,000 single-row
 * upserts a second were a third of what a scavenge promoted).
 */
export class MultiRow {
  readonly #statements = new Map<number, BetterSqlite3.Statement>();
  readonly #prepare: (rows: number) => BetterSqlite3.Statement;
  readonly #width: number;
  readonly #sizes: readonly number[];

  /**
   * `prepare(rows)`: the statement for `rows` rows; `width`: values per row; `sizes`: rows per statement,
   * largest first, ending with 1.
   */
  constructor(prepare: (rows: number) => BetterSqlite3.Statement, width: number, sizes: readonly number[]) {
    this.#prepare = prepare;
    this.#width = width;
    this.#sizes = sizes;
  }

  /** Runs the statement over `values`, `width` values per row, row after row. */
  run(values: readonly unknown[]): void {
    const rows = values.length / this.#width;
    for (const [row, size] of fixedChunks(rows, this.#sizes)) {
      // One chunk (most batches): the values as they are, no copy.
      this.#of(size).run(size === rows ? values : values.slice(row * this.#width, (row + size) * this.#width));
    }
  }

  #of(rows: number): BetterSqlite3.Statement {
    let statement = this.#statements.get(rows);
    if (!statement) {
      statement = this.#prepare(rows);
      this.#statements.set(rows, statement);
    }
    return statement;
  }
}
