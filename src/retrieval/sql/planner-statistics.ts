import type { Db } from '../../storage/index.js';

/** Rows this process writes between two looks at the table's statistics. */
const CHECK_EVERY = 5_000;

/**
 * Keeps PostgreSQL's planner statistics of a table current after bulk writes, instead of waiting for
 * autovacuum (which looks once a minute, and only after 10 % of the table changed).
 *
 * Why: the exact-rerank read (`account_id = $1 AND user_id = $2 AND chunk_id = ANY($3)`) has two
 * indexes to choose from. Without statistics PostgreSQL guessed 23 rows for the tenant, took the
 * document index and read every row of the tenant for the 100 it wanted. Measured at 100k chunks of
 * one user written within a minute of the table's creation (never analysed yet): 90–150 ms a search,
 * against 1.6 ms for the same read once analysed. Written in bulk by an ingestion backlog, a table is
 * in that state until autovacuum comes.
 *
 * After every CHECK_EVERY rows this process inserts or deletes it reads the table's size as the planner
 * knows it and runs ANALYZE, in the background, when the table was never analysed or this process alone
 * changed a quarter of it since its last ANALYZE. (PostgreSQL's own change counters lag by up to a
 * second, so the process counts its writes itself; other writers are autovacuum's.) A quarter, not
 * autovacuum's tenth: an ANALYZE of a 100k-chunk table took 50–170 ms here, and a table grown from
 * nothing to 100k in one go is analysed ~9 times instead of ~25. One at a time; a failure is reported
 * and the next look tries again.
 */
export class PlannerStatistics {
  readonly #db: Db;
  readonly #table: string;
  readonly #onError: (err: unknown) => void;
  readonly #checkEvery: number;
  /** Rows written since the last look, and since the last ANALYZE. */
  #sinceLook = 0;
  #sinceAnalyze = 0;
  #running: Promise<void> | undefined;
  /** ANALYZE statements run (for tests and logs). */
  analyzed = 0;

  constructor(
    db: Db,
    table: string,
    options: { onError?: ((err: unknown) => void) | undefined; checkEvery?: number | undefined } = {},
  ) {
    this.#db = db;
    this.#table = table;
    this.#onError = options.onError ?? (() => undefined);
    this.#checkEvery = options.checkEvery ?? CHECK_EVERY;
  }

  /** Counts rows inserted or deleted by this process; may start a look. */
  wrote(rows: number): void {
    if (this.#db.dialect !== 'postgres') return;
    this.#sinceLook += rows;
    this.#sinceAnalyze += rows;
    if (this.#sinceLook < this.#checkEvery || this.#running) return;
    this.#sinceLook = 0;
    this.#running = this.#refresh()
      .catch(this.#onError)
      .finally(() => {
        this.#running = undefined;
      });
  }

  /** Waits for a look under way (close, tests). */
  async settled(): Promise<void> {
    await this.#running;
  }

  async #refresh(): Promise<void> {
    const [row] = await this.#db.query<{ tuples: number }>(
      'SELECT reltuples AS tuples FROM pg_class WHERE oid = $1::regclass',
      [this.#table],
    );
    if (!row) return;
    const tuples = Number(row.tuples);
    // reltuples is -1 until the first ANALYZE or VACUUM (PostgreSQL 14+).
    if (tuples >= 0 && this.#sinceAnalyze < 50 + 0.25 * tuples) return;
    const written = this.#sinceAnalyze;
    await this.#db.query(`ANALYZE ${this.#table}`);
    this.#sinceAnalyze -= written;
    this.analyzed += 1;
  }
}
