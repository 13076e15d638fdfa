import {
  type Db,
  type DialectStatements,
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
import type { LogCursor, LoggedRequest, LogTenant, RequestLogFilter, RequestLogRow } from './types.js';

const COLUMNS = `account_id, key_id, request_id, user_id, endpoint, model, status, failed_status, error_code,
  prompt_tokens, completion_tokens, credits, latency_ms, cached, created_at, content_input, content_output,
  content_truncated`;
/** Values per row of COLUMNS. */
const WIDTH = 18;
/** Rows per SQLite INSERT statement, largest first (MultiRow). */
const SQLITE_SIZES = [16, 4, 1];
/** The most text of either side a row keeps, in UTF-16 code units (~32 KiB of ASCII). */
export const CONTENT_LIMIT = 32 * 1024;

const READ_COLUMNS = `l.id, l.request_id, l.created_at, l.key_id, k.prefix AS key_prefix, k.name AS key_name, l.user_id,
  l.endpoint, l.model, l.status, l.failed_status, l.error_code, l.prompt_tokens, l.completion_tokens, l.credits,
  l.latency_ms, l.cached, l.content_input, l.content_output, l.content_truncated`;
const FROM = 'request_logs l LEFT JOIN api_keys k ON k.id = l.key_id';

interface Statements {
  insert(rows: number): string;
}

const statements: DialectStatements<Statements> = {
  sqlite: { insert: (rows) => insertOf(rows, () => `(${'?, '.repeat(WIDTH - 1)}?)`) },
  postgres: { insert: (rows) => insertOf(rows, (row) => `(${placeholderList(WIDTH, row * WIDTH + 1)})`) },
};

function insertOf(rows: number, tuple: (row: number) => string): string {
  return `INSERT INTO request_logs (${COLUMNS}) VALUES ${Array.from({ length: rows }, (_, row) => tuple(row)).join(', ')}`;
}

/** Text cut to CONTENT_LIMIT, never through a surrogate pair. */
function bounded(text: string | null | undefined): { text: string | null; cut: boolean } {
  if (text === null || text === undefined) return { text: null, cut: false };
  if (text.length <= CONTENT_LIMIT) return { text, cut: false };
  let end = CONTENT_LIMIT;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return { text: text.slice(0, end), cut: true };
}

/** A record's values in COLUMNS order; booleans as 0/1 (better-sqlite3 binds none). What the staging log keeps. */
function valuesOf(r: LoggedRequest): unknown[] {
  const input = bounded(r.content?.input);
  const output = bounded(r.content?.output);
  return [
    r.accountId,
    r.keyId,
    r.requestId,
    r.userId ?? null,
    r.endpoint,
    r.model,
    r.status,
    r.failedStatus ?? null,
    r.errorCode ?? null,
    r.promptTokens,
    r.completionTokens,
    r.credits,
    Math.round(r.latencyMs),
    Number(r.cached),
    r.createdAt,
    input.text,
    output.text,
    Number(input.cut || output.cut),
  ];
}

function toRow(r: Row): RequestLogRow {
  const nullable = <T>(v: unknown, as: (v: unknown) => T): T | null => (v === null || v === undefined ? null : as(v));
  const input = nullable(r.content_input, String);
  const output = nullable(r.content_output, String);
  return {
    id: Number(r.id),
    requestId: String(r.request_id),
    createdAt: Number(r.created_at),
    keyId: nullable(r.key_id, String),
    keyPrefix: nullable(r.key_prefix, String),
    keyName: nullable(r.key_name, String),
    userId: nullable(r.user_id, String),
    endpoint: String(r.endpoint),
    model: nullable(r.model, String),
    status: Number(r.status),
    failedStatus: nullable(r.failed_status, Number),
    errorCode: nullable(r.error_code, String),
    promptTokens: Number(r.prompt_tokens),
    completionTokens: Number(r.completion_tokens),
    credits: Number(r.credits),
    latencyMs: Number(r.latency_ms),
    cached: Boolean(Number(r.cached)),
    content:
      input === null && output === null ? null : { input, output, truncated: Boolean(Number(r.content_truncated)) },
  };
}

/** The WHERE clause of a listing and its parameters, after `$1` (the account). */
function whereOf(filter: RequestLogFilter, after: LogCursor | undefined): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const parts: string[] = [];
  const add = (clause: (n: number) => string, value: unknown) => {
    params.push(value);
    parts.push(clause(params.length + 1));
  };
  if (filter.keyId !== undefined) add((n) => `l.key_id = $${n}`, filter.keyId);
  if (filter.userId !== undefined) add((n) => `l.user_id = $${n}`, filter.userId);
  if (filter.status !== undefined) add((n) => `l.status = $${n}`, filter.status);
  if (filter.model !== undefined) add((n) => `l.model = $${n}`, filter.model);
  if (filter.start !== undefined) add((n) => `l.created_at >= $${n}`, filter.start);
  if (filter.end !== undefined) add((n) => `l.created_at < $${n}`, filter.end);
  if (filter.errorsOnly) parts.push('(l.status >= 400 OR l.failed_status IS NOT NULL)');
  if (after) {
    params.push(after.createdAt, after.id);
    const [at, id] = [params.length, params.length + 1];
    parts.push(`(l.created_at < $${at} OR (l.created_at = $${at} AND l.id < $${id}))`);
  }
  return { sql: parts.map((p) => ` AND ${p}`).join(''), params };
}

/**
 * The request logs' table: rows inserted a chunk at a time (one transaction each; on PostgreSQL claimed by the
 * chunk's id, so a retry after a lost COMMIT answer writes it once), read newest first by keyset, the end user's
 * exported and deleted, the rows past the retention deleted.
 */
export class SqlRequestLogStore {
  readonly #db: Db;
  readonly #sql: Statements;
  readonly #insertSqlite: ((rows: readonly LoggedRequest[]) => void) | undefined;
  /**
   * The server that owns its SQLite file stages each chunk (one row of the staging log, the log's last pages) and
   * writes its rows to the table a generation (2 s) later, sorted by account, as usage rows are: written at once,
   * each row put entries on pages of its account in three indexes, and every 64-row commit rewrote ~200 pages
   * to the WAL (at 1,000 busy accounts ~27 µs of SQLite a cache hit, a sixth of its CPU in bench:chat's profile).
   */
  readonly #staged: StagingLog<unknown[]> | undefined;
  readonly #batches = new WriteBatches();

  constructor(db: Db) {
    this.#db = db;
    this.#sql = statements[db.dialect];
    if (db.dialect === 'sqlite') {
      const sqlite = db.sqlite;
      const inserts = new MultiRow((rows) => sqlite.prepare(this.#sql.insert(rows)), WIDTH, SQLITE_SIZES);
      const write = (rows: readonly unknown[][]) => {
        const values: unknown[] = [];
        for (const row of rows) for (const value of row) values.push(value);
        inserts.run(values);
      };
      if (db.owned) {
        const staged = stagingLogOf<unknown[]>(sqlite, { name: 'request_logs', key: (row) => row[0] as string, write });
        this.#staged = staged;
        this.#insertSqlite = (rows) => staged.append(rows.map(valuesOf));
      } else this.#insertSqlite = (rows) => transaction(db, () => write(rows.map(valuesOf)));
    }
  }

  /** One chunk of rows in one transaction; `chunkId` keeps a PostgreSQL retry from writing it twice. */
  async insert(rows: readonly LoggedRequest[], chunkId: string): Promise<void> {
    if (rows.length === 0) return;
    if (this.#insertSqlite) return this.#insertSqlite(rows);
    if (this.#db.dialect !== 'postgres') return;
    await transaction(this.#db, async (tx) => {
      if (!(await this.#batches.claim(tx, chunkId))) return;
      const values: unknown[] = [];
      for (const r of rows) values.push(...valuesOf(r));
      await tx.query(this.#sql.insert(rows.length), values);
    });
  }

  /** Every staged row written to the table (reads and deletes come after it); other stores write rows at once. */
  async drain(): Promise<void> {
    await this.#staged?.drain();
  }

  /** A page of the account's rows, newest first, `limit` of them after `after`. */
  async list(
    accountId: string,
    filter: RequestLogFilter,
    after: LogCursor | undefined,
    limit: number,
  ): Promise<RequestLogRow[]> {
    const where = whereOf(filter, after);
    const rows = await this.#db.query(
      `SELECT ${READ_COLUMNS} FROM ${FROM} WHERE l.account_id = $1${where.sql}
        ORDER BY l.created_at DESC, l.id DESC LIMIT ${Math.trunc(limit)}`,
      [accountId, ...where.params],
    );
    return rows.map(toRow);
  }

  /** Where a page goes on after the row `id` of the account; undefined when the account has no such row. */
  async cursorOf(accountId: string, id: number): Promise<LogCursor | undefined> {
    const [row] = await this.#db.query('SELECT created_at FROM request_logs WHERE account_id = $1 AND id = $2', [
      accountId,
      id,
    ]);
    return row ? { createdAt: Number(row.created_at), id } : undefined;
  }

  /** The account's newest row of this request id (an end user's only, when `userId` is given). */
  async byRequestId(accountId: string, requestId: string, userId?: string): Promise<RequestLogRow | undefined> {
    const params: unknown[] = [accountId, requestId];
    if (userId !== undefined) params.push(userId);
    const [row] = await this.#db.query(
      `SELECT ${READ_COLUMNS} FROM ${FROM} WHERE l.account_id = $1 AND l.request_id = $2
        ${userId === undefined ? '' : 'AND l.user_id = $3'} ORDER BY l.created_at DESC, l.id DESC LIMIT 1`,
      params,
    );
    return row ? toRow(row) : undefined;
  }

  /** The end user's rows, oldest first, after the row `afterId` (a page of their export). */
  async userRows(tenant: LogTenant, afterId: number, limit: number): Promise<RequestLogRow[]> {
    const rows = await this.#db.query(
      `SELECT ${READ_COLUMNS} FROM ${FROM} WHERE l.account_id = $1 AND l.user_id = $2 AND l.id > $3
        ORDER BY l.id LIMIT ${Math.trunc(limit)}`,
      [tenant.accountId, tenant.userId, afterId],
    );
    return rows.map(toRow);
  }

  /** Deletes the end user's rows (their erase); how many there were. */
  deleteUser(tenant: LogTenant): Promise<number> {
    return this.#delete('DELETE FROM request_logs WHERE account_id = $1 AND user_id = $2', [
      tenant.accountId,
      tenant.userId,
    ]);
  }

  /**
   * Deletes up to `limit` rows made before `before` (a chunk of the retention's sweep); how many. By id under
   * the time index: replicas that sweep at once delete the same rows or others, never fail on each other.
   */
  deleteBefore(before: number, limit: number): Promise<number> {
    return this.#delete(
      `DELETE FROM request_logs WHERE id IN
        (SELECT id FROM request_logs WHERE created_at < $1 ORDER BY created_at LIMIT ${Math.trunc(limit)})`,
      [before],
    );
  }

  async #delete(sql: string, params: unknown[]): Promise<number> {
    if (this.#db.dialect === 'sqlite') {
      return this.#db.sqlite.prepare(toSqlitePlaceholders(sql)).run(toSqliteParams(params)).changes;
    }
    const [row] = await this.#db.query(`WITH gone AS (${sql} RETURNING 1) SELECT count(*) AS n FROM gone`, params);
    return Number(row?.n ?? 0);
  }
}
