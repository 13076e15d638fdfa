import { type Db, MultiRow, placeholderList, type Row, transaction } from '../storage/index.js';
import { BUCKET_COUNT } from './histogram.js';
import type { Resolution, SlaBucket, SlaStore } from './types.js';

const KEY = ['account_id', 'resolution', 'bucket_start', 'endpoint', 'model'];
const LATENCY = Array.from({ length: BUCKET_COUNT }, (_, i) => `lat_${i}`);
const TTFT = Array.from({ length: BUCKET_COUNT }, (_, i) => `ttft_${i}`);
/** The columns that are sums: an upsert adds them, a read sums them. */
const SUMMED = [
  'requests',
  'errors',
  'upstream_errors',
  'timeouts',
  'latency_sum_ms',
  'ttft_count',
  'ttft_sum_ms',
  ...LATENCY,
  ...TTFT,
];

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
 * Rows per SQLite upsert, largest first (a flush chunk of 96 buckets is three statements). One upsert per
 * bucket that bound only the histogram slots that counted was ~4 µs a bucket, against ~7 µs with every
 * column; but the 3,000 runs a second of 1,000 busy accounts made 3,000 result objects that outlived their
 * scavenge (a third of what each promoted). Several rows a statement bind every column and run once.
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

/** A bucket's values in the upsert's column order (KEY, then SUMMED), pushed onto `out`. */
function pushValues(out: unknown[], b: SlaBucket): void {
  out.push(b.accountId, b.resolution, b.bucketStart, b.endpoint, b.model);
  out.push(
    b.requests,
    b.errors,
    b.upstreamErrors,
    b.timeouts,
    Math.round(b.latencySumMs),
    b.ttftCount,
    Math.round(b.ttftSumMs),
  );
  for (let i = 0; i < BUCKET_COUNT; i++) out.push(b.latency[i] ?? 0);
  for (let i = 0; i < BUCKET_COUNT; i++) out.push(b.ttft[i] ?? 0);
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
  /** SQLite: the upsert, several buckets a statement (better-sqlite3 binds `?` in order). */
  #upserts: MultiRow | undefined;

  constructor(db: Db) {
    this.#db = db;
  }

  async add(buckets: readonly SlaBucket[]): Promise<void> {
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
      const params: unknown[] = [];
      for (const b of rows) pushValues(params, b);
      // One transaction, the buckets several to an upsert: the recorder sends them in small chunks, one per
      // event-loop turn.
      transaction(db, () => upserts.run(params));
      return;
    }
    // Each statement is atomic on its own; rows in key order, so two replicas' statements lock alike.
    for (let at = 0; at < rows.length; at += POSTGRES_CHUNK) {
      const chunk = rows.slice(at, at + POSTGRES_CHUNK);
      await db.query(upsertOf(SUMMED, chunk.length), chunk.flatMap(values));
    }
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
