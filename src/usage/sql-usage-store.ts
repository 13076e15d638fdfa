import {
  type Db,
  type DialectStatements,
  fixedChunks,
  MultiRow,
  placeholderList,
  type Row,
  type StagingLog,
  stagingLogOf,
  toSqliteParams,
  toSqlitePlaceholders,
  transaction,
  WriteBatches,
} from '../storage/index.js';
import type {
  EndUser,
  GroupPage,
  GroupPageQuery,
  RollupGroupBy,
  UsageGroupBy,
  UsageRecord,
  UsageStore,
  UsageTotals,
  UserUsageRow,
} from './types.js';
import { pageOf, requestGroups, SUMS, toTotals } from './usage-groups.js';
import { logUsage, usageFromLog } from './usage-log-encoding.js';

const DAY_MS = 86_400_000;
/** The rollup's granularity: a period's partial first and last hour are read from the rows. */
const HOUR_MS = 3_600_000;
/** Rows per PostgreSQL INSERT, largest first: 13 parameters a row stays well under the parameter limit. */
const INSERT_CHUNKS = [256, 64, 16, 4, 1];
/**
 * Rows per SQLite INSERT and rollup upsert: the staging log hands over 16 rows a chunk (a key's rows are
 * never cut, so a few more at times), written in one to three statements instead of one per row.
 */
const SQLITE_CHUNKS = [16, 4, 1];

/** The same sums over the hourly rollup. */
const ROLLUP_SUMS = `coalesce(sum(requests), 0) AS requests, coalesce(sum(credits), 0) AS credits,
  coalesce(sum(prompt_tokens), 0) AS prompt_tokens, coalesce(sum(completion_tokens), 0) AS completion_tokens`;

/** Adds a batch's sums to its (account, hour, model) rows of the rollup; replicas' batches sum. */
function rollupUpsertOf(rows: number, tuple: (row: number) => string): string {
  return `INSERT INTO usage_hourly (account_id, hour, model, requests, credits, prompt_tokens, completion_tokens)
  VALUES ${Array.from({ length: rows }, (_, row) => tuple(row)).join(', ')}
  ON CONFLICT (account_id, hour, model) DO UPDATE SET requests = usage_hourly.requests + excluded.requests,
    credits = usage_hourly.credits + excluded.credits, prompt_tokens = usage_hourly.prompt_tokens + excluded.prompt_tokens,
    completion_tokens = usage_hourly.completion_tokens + excluded.completion_tokens`;
}
const ROLLUP_PARAMETERS = 7;
const ROLLUP_UPSERT = rollupUpsertOf(1, () => `(${placeholderList(ROLLUP_PARAMETERS)})`);
const ROLLUP_TUPLE_SQLITE = `(${'?, '.repeat(ROLLUP_PARAMETERS - 1)}?)`;

/** A batch's rows summed per account, hour and model: the rollup's additions, in ROLLUP_UPSERT order. */
function rollupAdditions(rows: readonly UsageRecord[]): unknown[][] {
  const sums = new Map<string, [string, number, string, number, number, number, number]>();
  for (const r of rows) {
    const hour = r.createdAt - (r.createdAt % HOUR_MS);
    const model = r.model ?? '';
    const key = `${r.accountId}\u0000${hour}\u0000${model}`;
    let sum = sums.get(key);
    if (!sum) {
      sum = [r.accountId, hour, model, 0, 0, 0, 0];
      sums.set(key, sum);
    }
    sum[3] += 1;
    sum[4] += r.credits;
    sum[5] += r.promptTokens;
    sum[6] += r.completionTokens;
  }
  return [...sums.values()];
}

type Grouping = RollupGroupBy | 'none';

function addTotals(into: UsageTotals, t: UsageTotals): void {
  into.requests += t.requests;
  into.credits += t.credits;
  into.promptTokens += t.promptTokens;
  into.completionTokens += t.completionTokens;
}

const COLUMNS = `account_id, key_id, request_id, endpoint, model, status, prompt_tokens, completion_tokens, credits,
  latency_ms, cached, created_at, user_id`;
/** Per row of COLUMNS. */
const PARAMETERS = 13;

/** The statements whose text differs by dialect. */
interface UsageStatements {
  /** An INSERT of `rows` usage rows, their values in COLUMNS order one row after another. */
  insert(rows: number): string;
}

/**
 * Both take several rows per INSERT: SQLite's are bound positionally (`?`, in order) and prepared once per
 * size (SQLITE_CHUNKS), PostgreSQL's take `$n` (INSERT_CHUNKS).
 */
const statements: DialectStatements<UsageStatements> = {
  sqlite: {
    insert: (rows) => insertOf(rows, () => `(${'?, '.repeat(PARAMETERS - 1)}?)`),
  },
  postgres: {
    insert: (rows) => insertOf(rows, (row) => `(${placeholderList(PARAMETERS, row * PARAMETERS + 1)})`),
  },
};

/** An INSERT of `rows` rows, each row's placeholders from `tuple`. */
function insertOf(rows: number, tuple: (row: number) => string): string {
  return `INSERT INTO usage_records (${COLUMNS}) VALUES ${Array.from({ length: rows }, (_, row) => tuple(row)).join(', ')}`;
}

/** A row's values in COLUMNS order pushed onto `out`, no array per row; better-sqlite3 binds no booleans, so `cached` as 0/1. */
function pushValues(out: unknown[], r: UsageRecord): void {
  out.push(r.accountId, r.keyId, r.requestId, r.endpoint, r.model, r.status, r.promptTokens, r.completionTokens);
  out.push(r.credits, Math.round(r.latencyMs), Number(r.cached), r.createdAt, r.userId ?? null);
}

export class SqlUsageStore implements UsageStore {
  readonly #db: Db;
  readonly #sql: UsageStatements;
  /** SQLite: prepared statements run inside one transaction per batch (no SQL built per batch). */
  readonly #insertSqlite: ((rows: readonly UsageRecord[]) => void) | undefined;
  /**
   * The server that owns its SQLite file stages each batch (one row of the staging log) and writes the rows
   * to their table a generation (2 s) later, sorted by account: each row put two index entries and a rollup
   * row on pages of its account, ~20 µs a row in batches of 50 ms at 1,000 busy accounts, ~7 µs in a second's.
   */
  readonly #staged: StagingLog<UsageRecord> | undefined;
  readonly #batches = new WriteBatches();

  constructor(db: Db) {
    this.#db = db;
    this.#sql = statements[db.dialect];
    if (db.dialect === 'sqlite') {
      const sqlite = db.sqlite;
      const inserts = new MultiRow((rows) => sqlite.prepare(this.#sql.insert(rows)), PARAMETERS, SQLITE_CHUNKS);
      const rollups = new MultiRow(
        (rows) => sqlite.prepare(rollupUpsertOf(rows, () => ROLLUP_TUPLE_SQLITE)),
        ROLLUP_PARAMETERS,
        SQLITE_CHUNKS,
      );
      const write = (rows: readonly UsageRecord[]) => {
        const values: unknown[] = [];
        for (const r of rows) pushValues(values, r);
        inserts.run(values);
        rollups.run(rollupAdditions(rows).flat());
      };
      this.#insertSqlite = (rows) => transaction(db, () => write(rows));
      if (db.owned) {
        this.#staged = stagingLogOf(db.sqlite, {
          name: 'usage',
          key: (r) => r.accountId,
          write,
          encode: logUsage,
          decode: usageFromLog,
        });
      }
    }
  }

  async record(r: UsageRecord): Promise<void> {
    await this.recordMany([r]);
  }

  /**
   * One transaction per batch: on SQLite a single WAL commit (staged, on the server that owns the file), on
   * PostgreSQL multi-row INSERTs; the hourly rollup is added to in the same transaction, so it never disagrees
   * with the rows. On PostgreSQL a `batchId` written before is not written again (a retry after a lost COMMIT answer).
   */
  async recordMany(rows: UsageRecord[], batchId?: string): Promise<void> {
    if (this.#staged) return this.#staged.append(rows);
    if (this.#insertSqlite) return this.#insertSqlite(rows);
    if (this.#db.dialect !== 'postgres') return;
    const sql = this.#sql;
    await transaction(this.#db, async (tx) => {
      if (batchId !== undefined && !(await this.#batches.claim(tx, batchId))) return;
      // Chunks of a few fixed sizes, so the statements are prepared once and then reused.
      for (const [at, size] of fixedChunks(rows.length, INSERT_CHUNKS)) {
        await tx.query(
          sql.insert(size),
          rows.slice(at, at + size).flatMap((r) => logUsage(r)),
        );
      }
      for (const d of rollupAdditions(rows)) await tx.query(ROLLUP_UPSERT, d);
    });
  }

  /** Every staged row written to its table (reads come after it); other stores write rows at once. */
  async flush(): Promise<void> {
    await this.#staged?.drain();
  }

  /** The rows that name the end user, oldest first, after the row `afterId` (a page of the user's export). */
  async userRows(tenant: EndUser, afterId: number, limit: number): Promise<UserUsageRow[]> {
    await this.flush();
    const rows = await this.#db.query(
      `SELECT id, request_id, endpoint, model, status, prompt_tokens, completion_tokens, credits, cached, latency_ms,
              created_at
         FROM usage_records WHERE account_id = $1 AND user_id = $2 AND id > $3 ORDER BY id LIMIT $4`,
      [tenant.accountId, tenant.userId, afterId, limit],
    );
    return rows.map((r) => ({
      id: Number(r.id),
      requestId: String(r.request_id),
      endpoint: String(r.endpoint),
      model: (r.model as string | null) ?? null,
      status: Number(r.status),
      promptTokens: Number(r.prompt_tokens),
      completionTokens: Number(r.completion_tokens),
      credits: Number(r.credits),
      cached: Boolean(r.cached),
      latencyMs: Number(r.latency_ms),
      createdAt: Number(r.created_at),
    }));
  }

  /**
   * Keeps the end user's rows without the user id (the erase): their counts, tokens and credits are the
   * account's and stay, so its usage, credits and SLA stay true. Returns how many rows named the user.
   */
  async forgetUser(tenant: EndUser): Promise<number> {
    await this.flush();
    const sql = 'UPDATE usage_records SET user_id = NULL WHERE account_id = $1 AND user_id = $2';
    const params = [tenant.accountId, tenant.userId];
    if (this.#db.dialect === 'sqlite') {
      return this.#db.sqlite.prepare(toSqlitePlaceholders(sql)).run(toSqliteParams(params)).changes;
    }
    const [row] = await this.#db.query<{ n: number }>(
      `WITH changed AS (${sql} RETURNING 1) SELECT count(*) AS n FROM changed`,
      params,
    );
    return Number(row?.n ?? 0);
  }

  async totals(accountId: string, start: number, end: number): Promise<UsageTotals> {
    return (await this.#sums(accountId, start, end, 'none')).get('') ?? toTotals(undefined);
  }

  async series(
    accountId: string,
    start: number,
    end: number,
    groupBy: RollupGroupBy,
  ): Promise<Array<UsageTotals & { key: string }>> {
    const sums = await this.#sums(accountId, start, end, groupBy);
    const keys = [...sums.keys()].sort((a, b) =>
      groupBy === 'day' ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0,
    );
    return keys.map((bucket) => ({
      key: groupBy === 'day' ? new Date(Number(bucket)).toISOString().slice(0, 10) : bucket,
      ...(sums.get(bucket) as UsageTotals),
    }));
  }

  /**
   * A page of the series: per key or end user from the rows; per day or model from the rollup's series, whose
   * requests of no model ('') become the group null, last.
   */
  async groupPage(
    accountId: string,
    start: number,
    end: number,
    groupBy: UsageGroupBy,
    page: GroupPageQuery,
  ): Promise<GroupPage> {
    await this.flush();
    if (groupBy === 'key' || groupBy === 'user')
      return requestGroups(this.#db, accountId, { start, end }, groupBy, page);
    const series = (await this.series(accountId, start, end, groupBy)).map((g) => ({ ...g, key: g.key || null }));
    return pageOf([...series.filter((g) => g.key !== null), ...series.filter((g) => g.key === null)], page);
  }

  /**
   * Sums over [start, end): whole hours from the hourly rollup (one row per model and hour), the partial
   * first and last hour from the rows themselves. So a month costs ~720 rollup rows per model plus at most
   * two hours of rows, not the month's rows.
   */
  async #sums(accountId: string, start: number, end: number, group: Grouping): Promise<Map<string, UsageTotals>> {
    await this.flush();
    const firstWholeHour = Math.ceil(start / HOUR_MS) * HOUR_MS;
    const wholeHoursEnd = Math.floor(end / HOUR_MS) * HOUR_MS;
    const parts =
      firstWholeHour < wholeHoursEnd
        ? [
            this.#raw(accountId, start, firstWholeHour, group),
            this.#rollup(accountId, firstWholeHour, wholeHoursEnd, group),
            this.#raw(accountId, wholeHoursEnd, end, group),
          ]
        : [this.#raw(accountId, start, end, group)];
    const sums = new Map<string, UsageTotals>();
    for (const rows of await Promise.all(parts)) {
      for (const row of rows) {
        const key = String(row.bucket);
        const totals = toTotals(row);
        if (group !== 'none' && totals.requests === 0) continue;
        const sum = sums.get(key);
        if (sum) addTotals(sum, totals);
        else sums.set(key, totals);
      }
    }
    return sums;
  }

  async #raw(accountId: string, start: number, end: number, group: Grouping): Promise<Row[]> {
    if (start >= end) return [];
    // Days are computed from the integer timestamp so the SQL is the same on both dialects.
    const bucket =
      group === 'day' ? `(created_at - (created_at % ${DAY_MS}))` : group === 'model' ? "coalesce(model, '')" : "''";
    return this.#db.query(
      `SELECT ${bucket} AS bucket, ${SUMS} FROM usage_records
        WHERE account_id = $1 AND created_at >= $2 AND created_at < $3
        ${group === 'none' ? '' : 'GROUP BY bucket'}`,
      [accountId, start, end],
    );
  }

  async #rollup(accountId: string, start: number, end: number, group: Grouping): Promise<Row[]> {
    const bucket = group === 'day' ? `(hour - (hour % ${DAY_MS}))` : group === 'model' ? 'model' : "''";
    return this.#db.query(
      `SELECT ${bucket} AS bucket, ${ROLLUP_SUMS} FROM usage_hourly
        WHERE account_id = $1 AND hour >= $2 AND hour < $3
        ${group === 'none' ? '' : 'GROUP BY bucket'}`,
      [accountId, start, end],
    );
  }
}
