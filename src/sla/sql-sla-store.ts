import { type Db, type DialectStatements, placeholderList, type Row, transaction } from '../storage/index.js';
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
const COLUMNS = [...KEY, ...SUMMED];

/**
 * Every statement is an upsert that adds (`SET n = sla_buckets.n + excluded.n`): two replicas writing
 * the same minute of the same account sum, and nothing is read before it is written. The same SQL runs
 * on SQLite (3.24+) and PostgreSQL.
 */
const UPSERT = `INSERT INTO sla_buckets (${COLUMNS.join(', ')}) VALUES (${placeholderList(COLUMNS.length)})
  ON CONFLICT (${KEY.join(', ')}) DO UPDATE SET ${SUMMED.map((c) => `${c} = sla_buckets.${c} + excluded.${c}`).join(', ')}`;

/** The statements whose text differs by dialect. */
interface SlaStatements {
  /** UPSERT with the dialect's placeholders. */
  upsert: string;
}

/** SQLite's is prepared once and bound positionally (`?`: UPSERT's placeholders are in order). */
const statements: DialectStatements<SlaStatements> = {
  sqlite: { upsert: UPSERT.replace(/\$\d+/g, '?') },
  postgres: { upsert: UPSERT },
};

function values(b: SlaBucket): unknown[] {
  return [
    b.accountId,
    b.resolution,
    b.bucketStart,
    b.endpoint,
    b.model,
    b.requests,
    b.errors,
    b.upstreamErrors,
    b.timeouts,
    Math.round(b.latencySumMs),
    b.ttftCount,
    Math.round(b.ttftSumMs),
    ...b.latency,
    ...b.ttft,
  ];
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
  readonly #sql: SlaStatements;
  readonly #addSqlite: ((buckets: readonly SlaBucket[]) => void) | undefined;

  constructor(db: Db) {
    this.#db = db;
    this.#sql = statements[db.dialect];
    if (db.dialect === 'sqlite') {
      const upsert = db.sqlite.prepare(this.#sql.upsert);
      this.#addSqlite = (buckets) =>
        transaction(db, () => {
          for (const b of buckets) upsert.run(values(b));
        });
    }
  }

  async add(buckets: readonly SlaBucket[]): Promise<void> {
    if (buckets.length === 0) return;
    if (this.#addSqlite) return this.#addSqlite(buckets);
    // One statement per bucket: each is atomic on its own, and a flush holds a few dozen at most.
    for (const b of buckets) await this.#db.query(this.#sql.upsert, values(b));
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
