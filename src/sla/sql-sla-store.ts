import type BetterSqlite3 from 'better-sqlite3';
import { type Db, MultiRow, placeholderList, type Row, transaction, WriteBatches } from '../storage/index.js';
import { BUCKET_COUNT } from './histogram.js';
import type { Resolution, SlaBucket, SlaStore } from './types.js';

const KEY = ['account_id', 'resolution', 'bucket_start', 'endpoint', 'model'];
const LATENCY = Array.from({ length: BUCKET_COUNT }, (_, i) => `lat_${i}`);
const TTFT = Array.from({ length: BUCKET_COUNT }, (_, i) => `ttft_${i}`);
/** The columns that are sums (as migration 1764200000000 made them): an upsert adds them, a read sums them. */
const COUNTS = ['requests', 'errors', 'upstream_errors', 'timeouts'];
const SUMMED = [...COUNTS, 'latency_sum_ms', 'ttft_count', 'ttft_sum_ms', ...LATENCY, ...TTFT];

/**
 * Every statement is an upsert that adds (`SET n = sla_buckets.n + excluded.n`): two replicas writing
 * the same minute of the same account sum, and nothing is read before it is written. The same SQL runs
 * on SQLite (3.24+) and PostgreSQL.
 */
function upsertOf(summed: readonly string[], rows: number): string {
  const columns = [...KEY, ...summed];
  const tuples = Array.from({ length: rows }, (_, r) => `(${placeholderList(columns.length, r * columns.length + 1)})`);
  return `INSERT INTO sla_buckets (${columns.join(', ')}) VALUES ${tuples.join(', ')}
  ON CONFLICT (${KEY.join(', ')}) DO UPDATE SET ${summed.map((c) => `${c} = sla_buckets.${c} + excluded.${c}`).join(', ')}`;
}

/** Rows per PostgreSQL statement (40 parameters each): one round trip per chunk instead of per bucket. */
const POSTGRES_CHUNK = 100;
/**
 * Rows per SQLite upsert, largest first (a flush chunk of 96 buckets of one shape is three statements). One
 * upsert per bucket that bound only the histogram slots that counted was ~4 µs a bucket, against ~7 µs with
 * every column; but the 3,000 runs a second of 1,000 busy accounts made 3,000 result objects that outlived
 * their scavenge (a third of what each promoted). So both: several rows a statement, each statement naming only
 * the columns its buckets counted in (buckets grouped by that shape, `shapeOf`).
 */
const SQLITE_CHUNKS = [32, 8, 2, 1] as const;

/** Key order: a bucket's three resolutions side by side, and the same lock order on every replica. */
function compareKeys(a: SlaBucket, b: SlaBucket): number {
  return (
    cmp(a.accountId, b.accountId) ||
    cmp(a.endpoint, b.endpoint) ||
    cmp(a.model, b.model) ||
    cmp(a.resolution, b.resolution) ||
    a.bucketStart - b.bucketStart
  );
}
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The buckets in key order, those with the same key added into one (a statement may touch a row once). */
function merged(buckets: readonly SlaBucket[]): SlaBucket[] {
  const sorted = [...buckets].sort(compareKeys);
  const out: SlaBucket[] = [];
  for (const b of sorted) {
    const last = out[out.length - 1];
    if (last && compareKeys(last, b) === 0) out[out.length - 1] = sum(last, b);
    else out.push(b);
  }
  return out;
}

function sum(a: SlaBucket, b: SlaBucket): SlaBucket {
  return {
    ...a,
    requests: a.requests + b.requests,
    errors: a.errors + b.errors,
    upstreamErrors: a.upstreamErrors + b.upstreamErrors,
    timeouts: a.timeouts + b.timeouts,
    latencySumMs: a.latencySumMs + b.latencySumMs,
    latency: a.latency.map((n, i) => n + (b.latency[i] ?? 0)),
    ttftCount: a.ttftCount + b.ttftCount,
    ttftSumMs: a.ttftSumMs + b.ttftSumMs,
    ttft: a.ttft.map((n, i) => n + (b.ttft[i] ?? 0)),
  };
}

/** UPSERT's `$n` are in order, so SQLite binds them positionally as `?`. */
const toPositional = (sql: string) => sql.replace(/\$\d+/g, '?');

/** The value of the bucket's summed column `i` (SUMMED order): a count, or a sum of milliseconds rounded. */
function summedAt(b: SlaBucket, i: number): number {
  switch (i) {
    case 0:
      return b.requests;
    case 1:
      return b.errors;
    case 2:
      return b.upstreamErrors;
    case 3:
      return b.timeouts;
    case 4:
      return Math.round(b.latencySumMs);
    case 5:
      return b.ttftCount;
    case 6:
      return Math.round(b.ttftSumMs);
    default:
      return (i < 7 + BUCKET_COUNT ? b.latency[i - 7] : b.ttft[i - 7 - BUCKET_COUNT]) ?? 0;
  }
}

/**
 * The summed columns a bucket counted something in, as a number: bit i for column i of SUMMED (35 columns,
 * so two halves, 2^35 fits a double exactly). Buckets of one shape share an upsert that names only those.
 */
function shapeOf(b: SlaBucket): number {
  let low = 0;
  let high = 0;
  for (let i = 0; i < 21; i++) if (summedAt(b, i) !== 0) low |= 1 << i;
  for (let i = 21; i < SUMMED.length; i++) if (summedAt(b, i) !== 0) high |= 1 << (i - 21);
  return high * 2 ** 21 + low;
}

/** The SUMMED columns of a shape (`shapeOf`), in order. */
function columnsOf(shape: number): string[] {
  const low = shape % 2 ** 21;
  const high = Math.floor(shape / 2 ** 21);
  return SUMMED.filter((_, i) => (i < 21 ? (low >> i) & 1 : (high >> (i - 21)) & 1) === 1);
}

/** A bucket's key and the values of its shape's columns, pushed onto `out` (the shape's upsert binds those). */
function pushShaped(out: unknown[], b: SlaBucket): void {
  out.push(b.accountId, b.resolution, b.bucketStart, b.endpoint, b.model);
  for (let i = 0; i < SUMMED.length; i++) {
    const v = summedAt(b, i);
    if (v !== 0) out.push(v);
  }
}

/** Shapes whose upserts are kept prepared; buckets of further shapes take the upsert of every column. */
const MAX_SHAPES = 32;

/** A bucket's values in the upsert's column order (KEY, then SUMMED), pushed onto `out`. */
function pushValues(out: unknown[], b: SlaBucket): void {
  out.push(b.accountId, b.resolution, b.bucketStart, b.endpoint, b.model);
  for (let i = 0; i < SUMMED.length; i++) out.push(summedAt(b, i));
}

function values(b: SlaBucket): unknown[] {
  const out: unknown[] = [];
  pushValues(out, b);
  return out;
}

function toBucket(row: Row, accountId: string, resolution: Resolution): SlaBucket {
  const n = (c: string) => Number(row[c] ?? 0);
  return {
    accountId,
    resolution,
    bucketStart: n('bucket_start'),
    endpoint: String(row.endpoint),
    model: String(row.model),
    requests: n('requests'),
    errors: n('errors'),
    upstreamErrors: n('upstream_errors'),
    timeouts: n('timeouts'),
    latencySumMs: n('latency_sum_ms'),
    ttftCount: n('ttft_count'),
    ttftSumMs: n('ttft_sum_ms'),
    latency: LATENCY.map(n),
    ttft: TTFT.map(n),
  };
}

/** The SLA buckets in SQL, one adapter for SQLite and PostgreSQL. */
export class SqlSlaStore implements SlaStore {
  readonly #db: Db;
  /** SQLite: the upsert of every column, several buckets a statement (better-sqlite3 binds `?` in order). */
  #upserts: MultiRow | undefined;
  /** SQLite: the upserts of the shapes met so far (at most MAX_SHAPES), each naming only its columns. */
  readonly #shaped = new Map<number, MultiRow>();
  readonly #batches = new WriteBatches();

  constructor(db: Db) {
    this.#db = db;
  }

  async add(buckets: readonly SlaBucket[], batchId?: string): Promise<void> {
    if (buckets.length === 0) return;
    const rows = merged(buckets);
    const db = this.#db;
    if (db.dialect === 'sqlite') {
      const sqlite = db.sqlite;
      this.#upserts ??= new MultiRow(
        (n) => sqlite.prepare(toPositional(upsertOf(SUMMED, n))),
        KEY.length + SUMMED.length,
        SQLITE_CHUNKS,
      );
      const upserts = this.#upserts;
      // Buckets grouped by shape, each group bound to the upsert of its columns. better-sqlite3 13 binds each
      // value through N-API (~0.1 µs a value); a second of 1,000 busy accounts' buckets bound 35 summed values
      // each where ~3 are not zero, and binding was as much of a chunk's time as SQLite's own work.
      const groups = new Map<MultiRow, unknown[]>();
      const full: unknown[] = [];
      for (const b of rows) {
        const shape = shapeOf(b);
        if (shape === 0) continue;
        const upsert = this.#shapedUpsert(sqlite, shape);
        if (!upsert) {
          pushValues(full, b);
          continue;
        }
        let values = groups.get(upsert);
        if (!values) {
          values = [];
          groups.set(upsert, values);
        }
        pushShaped(values, b);
      }
      // One transaction, the buckets several to an upsert: the recorder sends them in small chunks, one per
      // event-loop turn.
      transaction(db, () => {
        for (const [upsert, values] of groups) upsert.run(values);
        if (full.length > 0) upserts.run(full);
      });
      return;
    }
    // Rows in key order, so two replicas' statements lock alike. A batch is one transaction with its id's claim:
    // a retry after a COMMIT whose answer was lost adds nothing.
    await transaction(db, async (tx) => {
      if (batchId !== undefined && !(await this.#batches.claim(tx, batchId))) return;
      for (let at = 0; at < rows.length; at += POSTGRES_CHUNK) {
        const chunk = rows.slice(at, at + POSTGRES_CHUNK);
        await tx.query(upsertOf(SUMMED, chunk.length), chunk.flatMap(values));
      }
    });
  }

  /** The upsert of a shape's columns (its statements prepared on first use); none once MAX_SHAPES are kept. */
  #shapedUpsert(sqlite: BetterSqlite3.Database, shape: number): MultiRow | undefined {
    let upsert = this.#shaped.get(shape);
    if (!upsert && this.#shaped.size < MAX_SHAPES) {
      const columns = columnsOf(shape);
      upsert = new MultiRow(
        (n) => sqlite.prepare(toPositional(upsertOf(columns, n))),
        KEY.length + columns.length,
        SQLITE_CHUNKS,
      );
      this.#shaped.set(shape, upsert);
    }
    return upsert;
  }

  async read(accountId: string, resolution: Resolution, from: number, to: number): Promise<SlaBucket[]> {
    const rows = await this.#db.query(
      `SELECT endpoint, model, min(bucket_start) AS bucket_start, ${SUMMED.map((c) => `sum(${c}) AS ${c}`).join(', ')}
         FROM sla_buckets
        WHERE account_id = $1 AND resolution = $2 AND bucket_start >= $3 AND bucket_start < $4
        GROUP BY endpoint, model ORDER BY model, endpoint`,
      [accountId, resolution, from, to],
    );
    return rows.map((row) => toBucket(row, accountId, resolution));
  }

  async prune(resolution: Resolution, before: number): Promise<number> {
    const rows = await this.#db.query<{ n: number }>(
      'DELETE FROM sla_buckets WHERE resolution = $1 AND bucket_start < $2 RETURNING 1 AS n',
      [resolution, before],
    );
    return rows.length;
  }
}
