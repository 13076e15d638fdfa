import { type Db, inTransaction, type Row, type Steps } from '../storage/index.js';
import type { FilePurpose, FileRecord, ListPage, Owner } from './types.js';

const COLUMNS = 'id, account_id, owner_user_id, filename, purpose, content_type, bytes, created_at';

function toFile(row: Row): FileRecord {
  const owner = row.owner_user_id as string;
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    userId: owner === '' ? null : owner,
    filename: row.filename as string,
    purpose: row.purpose as FilePurpose,
    contentType: row.content_type as string,
    bytes: Number(row.bytes),
    createdAt: Number(row.created_at),
  };
}

/**
 * The owner condition of a read (files, vector stores): the account's, and through a key bound to an end user
 * (`userId` set), only that end user's. `$1` is the account, `$2` the end user when there is one.
 */
export function ownerScope(owner: Owner): { sql: string; params: unknown[] } {
  return owner.userId === null
    ? { sql: 'account_id = $1', params: [owner.accountId] }
    : { sql: 'account_id = $1 AND owner_user_id = $2', params: [owner.accountId, owner.userId] };
}

/** The account's stored bytes and number of finished files: the totals a commit and an upload's caps read. */
const TOTALS = `SELECT COALESCE(SUM(bytes), 0) AS bytes, COUNT(*) AS n FROM files WHERE account_id = $1 AND status = 'processed'`;

export type CommitResult = { ok: true; file: FileRecord } | { ok: false; limit: 'bytes' | 'files' };

/**
 * Files and their bytes on the service's database, both dialects. A file is written in three steps: its row
 * (`uploading`), its parts as they arrive, then `commit`, which checks the account's totals and makes it visible
 * in one transaction (serialised per account on PostgreSQL by an advisory lock, so two uploads at once never take
 * the account past its tier; SQLite has one writer). A row left `uploading` (a client gone, a crash) is swept.
 */
export class SqlFileStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async begin(file: FileRecord): Promise<void> {
    await this.#db.query(
      `INSERT INTO files (id, account_id, owner_user_id, filename, purpose, content_type, bytes, status, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, 0, 'uploading', $7)`,
      [file.id, file.accountId, file.userId ?? '', file.filename, file.purpose, file.contentType, file.createdAt],
    );
  }

  async appendPart(fileId: string, ordinal: number, data: Buffer): Promise<void> {
    await this.#db.query('INSERT INTO file_parts (file_id, ordinal, data) VALUES ($1, $2, $3)', [
      fileId,
      ordinal,
      data,
    ]);
  }

  /** Makes the upload a file of `bytes` unless the account would hold more than the caps then. */
  commit(file: FileRecord, caps: { maxStoredBytes: number; maxFiles: number }): Promise<CommitResult> {
    const postgres = this.#db.dialect === 'postgres';
    return inTransaction(this.#db, function* (): Steps<CommitResult> {
      if (postgres) yield ["SELECT pg_advisory_xact_lock(hashtextextended('pvai_files:' || $1, 0))", [file.accountId]];
      const [totals] = yield [TOTALS, [file.accountId]];
      if (Number(totals?.n ?? 0) + 1 > caps.maxFiles) return { ok: false, limit: 'files' };
      if (Number(totals?.bytes ?? 0) + file.bytes > caps.maxStoredBytes) return { ok: false, limit: 'bytes' };
      yield [
        `UPDATE files SET status = 'processed', bytes = $2, content_type = $3, purpose = $4, owner_user_id = $5
         WHERE id = $1`,
        [file.id, file.bytes, file.contentType, file.purpose, file.userId ?? ''],
      ];
      return { ok: true, file };
    });
  }

  /** Removes a file and its bytes (an upload given up, or a file deleted). */
  async remove(fileId: string): Promise<void> {
    await this.#db.query('DELETE FROM file_parts WHERE file_id = $1', [fileId]);
    await this.#db.query('DELETE FROM files WHERE id = $1', [fileId]);
  }

  async get(owner: Owner, id: string): Promise<FileRecord | undefined> {
    const scope = ownerScope(owner);
    const rows = await this.#db.query(
      `SELECT ${COLUMNS} FROM files WHERE ${scope.sql} AND status = 'processed' AND id = $${scope.params.length + 1}`,
      [...scope.params, id],
    );
    return rows[0] ? toFile(rows[0]) : undefined;
  }

  /** The account's stored bytes and number of files (finished uploads). */
  async totals(accountId: string): Promise<{ bytes: number; files: number }> {
    const [row] = await this.#db.query(TOTALS, [accountId]);
    return { bytes: Number(row?.bytes ?? 0), files: Number(row?.n ?? 0) };
  }

  async list(owner: Owner, page: ListPage & { purpose?: FilePurpose | undefined }): Promise<FileRecord[]> {
    const scope = ownerScope(owner);
    const params = [...scope.params];
    let where = `${scope.sql} AND status = 'processed'`;
    if (page.purpose) {
      params.push(page.purpose);
      where += ` AND purpose = $${params.length}`;
    }
    const direction = page.order === 'asc' ? 'ASC' : 'DESC';
    if (page.after !== undefined) {
      const cursor = await this.get(owner, page.after);
      if (!cursor) return [];
      params.push(cursor.createdAt, cursor.id);
      const cmp = page.order === 'asc' ? '>' : '<';
      where += ` AND (created_at ${cmp} $${params.length - 1} OR (created_at = $${params.length - 1} AND id ${cmp} $${params.length}))`;
    }
    params.push(page.limit);
    const rows = await this.#db.query(
      `SELECT ${COLUMNS} FROM files WHERE ${where} ORDER BY created_at ${direction}, id ${direction} LIMIT $${params.length}`,
      params,
    );
    return rows.map(toFile);
  }

  /** One part of the file's bytes (parts are numbered from 0), or undefined past the last. */
  async part(fileId: string, ordinal: number): Promise<Buffer | undefined> {
    const rows = await this.#db.query<{ data: Buffer | Uint8Array }>(
      'SELECT data FROM file_parts WHERE file_id = $1 AND ordinal = $2',
      [fileId, ordinal],
    );
    const data = rows[0]?.data;
    return data === undefined ? undefined : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }

  /** The end user's own files (uploaded with their `user_id`), oldest first. */
  async ownedBy(accountId: string, userId: string): Promise<FileRecord[]> {
    const rows = await this.#db.query(
      `SELECT ${COLUMNS} FROM files WHERE account_id = $1 AND owner_user_id = $2 AND status = 'processed'
       ORDER BY created_at, id`,
      [accountId, userId],
    );
    return rows.map(toFile);
  }

  /** Uploads that never finished (a client gone, a crash) started before `before`. */
  async staleUploads(before: number): Promise<string[]> {
    const rows = await this.#db.query<{ id: string }>(
      "SELECT id FROM files WHERE status = 'uploading' AND created_at < $1",
      [before],
    );
    return rows.map((r) => r.id);
  }
}
