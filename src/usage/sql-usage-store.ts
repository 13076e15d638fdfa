import type { Db, Row } from '../storage/index.js';
import type { UsageGroupBy, UsageRecord, UsageStore, UsageTotals } from './types.js';

const DAY_MS = 86_400_000;
/** Rows per PostgreSQL INSERT, largest first: 12 parameters a row stays well under the parameter limit. */
const INSERT_CHUNKS = [256, 64, 16, 4, 1];

const SUMS = `count(*) AS requests, coalesce(sum(credits), 0) AS credits,
  coalesce(sum(prompt_tokens), 0) AS prompt_tokens, coalesce(sum(completion_tokens), 0) AS completion_tokens`;

function toTotals(row: Row | undefined): UsageTotals {
  return {
    requests: Number(row?.requests ?? 0),
    credits: Number(row?.credits ?? 0),
    promptTokens: Number(row?.prompt_tokens ?? 0),
    completionTokens: Number(row?.completion_tokens ?? 0),
  };
}

const COLUMNS = `account_id, key_id, request_id, endpoint, model, status, prompt_tokens, completion_tokens, credits,
  latency_ms, cached, created_at`;

/** A row's values in COLUMNS order; better-sqlite3 binds no booleans, so SQLite gets `cached` as 0/1. */
function values(r: UsageRecord, options: { sqliteBooleans?: boolean } = {}): unknown[] {
  return [
    r.accountId,
    r.keyId,
    r.requestId,
    r.endpoint,
    r.model,
    r.status,
    r.promptTokens,
    r.completionTokens,
    r.credits,
    Math.round(r.latencyMs),
    options.sqliteBooleans ? Number(r.cached) : r.cached,
    r.createdAt,
  ];
}

const SQLITE_BINDING = { sqliteBooleans: true } as const;

export class SqlUsageStore implements UsageStore {
  readonly #db: Db;
  /** SQLite: one prepared single-row INSERT run per row inside one transaction (no SQL built per batch). */
  readonly #insertSqlite: ((rows: readonly UsageRecord[]) => void) | undefined;

  constructor(db: Db) {
    this.#db = db;
    if (db.dialect === 'sqlite') {
      const insert = db.sqlite.prepare(`INSERT INTO usage_records (${COLUMNS}) VALUES (${'?, '.repeat(11)}?)`);
      this.#insertSqlite = db.sqlite.transaction((rows: readonly UsageRecord[]) => {
        for (const r of rows) insert.run(values(r, SQLITE_BINDING));
      });
    }
  }

  async record(r: UsageRecord): Promise<void> {
    await this.recordMany([r]);
  }

  /** One transaction per batch: on SQLite a single WAL commit, on PostgreSQL multi-row INSERTs. */
  async recordMany(rows: UsageRecord[]): Promise<void> {
    if (this.#insertSqlite) return this.#insertSqlite(rows);
    // Chunks of a few fixed sizes, so the statements are prepared once and then reused.
    for (let i = 0; i < rows.length; ) {
      const size = INSERT_CHUNKS.find((n) => rows.length - i >= n) ?? 1;
      const chunk = rows.slice(i, i + size);
      i += size;
      const params: unknown[] = [];
      const tuples = chunk.map((r) => {
        const base = params.length;
        params.push(...values(r));
        return `(${Array.from({ length: 12 }, (_, k) => `$${base + k + 1}`).join(', ')})`;
      });
      await this.#db.query(`INSERT INTO usage_records (${COLUMNS}) VALUES ${tuples.join(', ')}`, params);
    }
  }

  async flush(): Promise<void> {
    // Rows are written by record() itself.
  }

  async totals(accountId: string, start: number, end: number): Promise<UsageTotals> {
    const rows = await this.#db.query(
      `SELECT ${SUMS} FROM usage_records WHERE account_id = $1 AND created_at >= $2 AND created_at < $3`,
      [accountId, start, end],
    );
    return toTotals(rows[0]);
  }

  async series(
    accountId: string,
    start: number,
    end: number,
    groupBy: UsageGroupBy,
  ): Promise<Array<UsageTotals & { key: string }>> {
    // Days are computed from the integer timestamp so the SQL is the same on both dialects.
    const group = groupBy === 'day' ? `(created_at - (created_at % ${DAY_MS}))` : "coalesce(model, '')";
    const rows = await this.#db.query(
      `SELECT ${group} AS bucket, ${SUMS} FROM usage_records
        WHERE account_id = $1 AND created_at >= $2 AND created_at < $3
        GROUP BY bucket ORDER BY bucket`,
      [accountId, start, end],
    );
    return rows.map((row) => ({
      key: groupBy === 'day' ? new Date(Number(row.bucket)).toISOString().slice(0, 10) : String(row.bucket),
      ...toTotals(row),
    }));
  }
}
