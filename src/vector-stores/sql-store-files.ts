import type { ListPage } from '../files/index.js';
import { type Db, placeholderList, type Row } from '../storage/index.js';
import type { StoreFileRecord, StoreFileStatus } from './types.js';

/** A link's columns with its document's status and failure, and its file's name. */
const SELECT = `SELECT l.vector_store_id, l.file_id, l.account_id, l.document_id, l.batch_id, l.attributes,
  l.chunk_chars, l.overlap_chars, l.bytes, l.status, l.error_code, l.error_message, l.created_at,
  d.status AS document_status, d.failure_message AS document_failure, f.filename
  FROM vector_store_files l
  LEFT JOIN rag_documents d ON d.id = l.document_id
  LEFT JOIN files f ON f.id = l.file_id`;

/** The link's status: its own when stored (failed extraction, cancelled), else its document's (or waiting for one). */
function statusOf(row: Row): Pick<StoreFileRecord, 'status' | 'lastError'> {
  const own = row.status as StoreFileStatus | null;
  if (own) {
    const code = row.error_code as NonNullable<StoreFileRecord['lastError']>['code'] | null;
    return { status: own, lastError: code ? { code, message: (row.error_message as string | null) ?? '' } : null };
  }
  switch (row.document_status as string | null) {
    case 'ready':
      return { status: 'completed', lastError: null };
    case 'failed':
      return {
        status: 'failed',
        lastError: {
          code: 'invalid_file',
          message: (row.document_failure as string | null) ?? 'The file could not be indexed',
        },
      };
    default:
      return { status: 'in_progress', lastError: null };
  }
}

function toLink(row: Row): StoreFileRecord {
  return {
    vectorStoreId: row.vector_store_id as string,
    fileId: row.file_id as string,
    accountId: row.account_id as string,
    documentId: (row.document_id as string | null) ?? null,
    batchId: (row.batch_id as string | null) ?? null,
    attributes: JSON.parse(row.attributes as string) as StoreFileRecord['attributes'],
    chunking: { chars: Number(row.chunk_chars), overlapChars: Number(row.overlap_chars) },
    bytes: Number(row.bytes),
    filename: (row.filename as string | null) ?? '',
    createdAt: Number(row.created_at),
    ...statusOf(row),
  };
}

const BY_STATUS: Record<StoreFileStatus, string> = {
  completed: "(l.status IS NULL AND d.status = 'ready')",
  failed: "(l.status = 'failed' OR (l.status IS NULL AND d.status = 'failed'))",
  cancelled: "l.status = 'cancelled'",
  in_progress: "(l.status IS NULL AND (d.status IS NULL OR d.status = 'processing'))",
};

/** The files of vector stores (`vector_store_files`): which document each became, and its attributes. */
export class SqlStoreFiles {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Links the file unless the store holds it already; true when this call linked it. `leaseUntil`: the request
   * that extracts it at once holds it until then (the pump takes it up only if that request dies); 0 leaves it to
   * the pump.
   */
  async insert(link: StoreFileRecord, leaseUntil: number): Promise<boolean> {
    const rows = await this.#db.query(
      `INSERT INTO vector_store_files (vector_store_id, file_id, account_id, document_id, batch_id, attributes,
         chunk_chars, overlap_chars, bytes, status, lease_until, created_at)
       VALUES ($1, $2, $3, NULL, $4, $5, $6, $7, $8, NULL, $9, $10)
       ON CONFLICT (vector_store_id, file_id) DO NOTHING RETURNING file_id`,
      [
        link.vectorStoreId,
        link.fileId,
        link.accountId,
        link.batchId,
        JSON.stringify(link.attributes),
        link.chunking.chars,
        link.chunking.overlapChars,
        link.bytes,
        leaseUntil,
        link.createdAt,
      ],
    );
    return rows.length > 0;
  }

  async get(vectorStoreId: string, fileId: string): Promise<StoreFileRecord | undefined> {
    const rows = await this.#db.query(`${SELECT} WHERE l.vector_store_id = $1 AND l.file_id = $2`, [
      vectorStoreId,
      fileId,
    ]);
    return rows[0] ? toLink(rows[0]) : undefined;
  }

  /** A page of the store's files (of one batch, of one status), newest or oldest first. */
  async list(
    vectorStoreId: string,
    page: ListPage & { status?: StoreFileStatus | undefined; batchId?: string | undefined },
    cursor?: StoreFileRecord,
  ): Promise<StoreFileRecord[]> {
    const params: unknown[] = [vectorStoreId];
    let where = 'l.vector_store_id = $1';
    if (page.batchId !== undefined) {
      params.push(page.batchId);
      where += ` AND l.batch_id = $${params.length}`;
    }
    if (page.status) where += ` AND ${BY_STATUS[page.status]}`;
    const asc = page.order === 'asc';
    if (cursor) {
      const cmp = asc === (page.after !== undefined) ? '>' : '<';
      params.push(cursor.createdAt, cursor.fileId);
      const [c, i] = [`$${params.length - 1}`, `$${params.length}`];
      where += ` AND (l.created_at ${cmp} ${c} OR (l.created_at = ${c} AND l.file_id ${cmp} ${i}))`;
    }
    const backwards = cursor !== undefined && page.after === undefined;
    const direction = asc !== backwards ? 'ASC' : 'DESC';
    params.push(page.limit);
    const rows = await this.#db.query(
      `${SELECT} WHERE ${where} ORDER BY l.created_at ${direction}, l.file_id ${direction} LIMIT $${params.length}`,
      params,
    );
    const links = rows.map(toLink);
    return backwards ? links.reverse() : links;
  }

  /** Every file of the store (or of one of its batches), for its counts and bytes. */
  async all(vectorStoreId: string, batchId?: string): Promise<StoreFileRecord[]> {
    const rows =
      batchId === undefined
        ? await this.#db.query(`${SELECT} WHERE l.vector_store_id = $1`, [vectorStoreId])
        : await this.#db.query(`${SELECT} WHERE l.vector_store_id = $1 AND l.batch_id = $2`, [vectorStoreId, batchId]);
    return rows.map(toLink);
  }

  /** Every store's link to the file (a file deleted leaves them all). */
  async ofFile(fileId: string): Promise<StoreFileRecord[]> {
    return (await this.#db.query(`${SELECT} WHERE l.file_id = $1`, [fileId])).map(toLink);
  }

  /** The links of these documents (search results back to their files). */
  async ofDocuments(documentIds: readonly string[]): Promise<StoreFileRecord[]> {
    if (documentIds.length === 0) return [];
    const rows = await this.#db.query(`${SELECT} WHERE l.document_id IN (${placeholderList(documentIds.length)})`, [
      ...documentIds,
    ]);
    return rows.map(toLink);
  }

  async setDocument(vectorStoreId: string, fileId: string, documentId: string): Promise<void> {
    await this.#db.query('UPDATE vector_store_files SET document_id = $3 WHERE vector_store_id = $1 AND file_id = $2', [
      vectorStoreId,
      fileId,
      documentId,
    ]);
  }

  async setOutcome(
    vectorStoreId: string,
    fileId: string,
    status: 'failed' | 'cancelled',
    error: StoreFileRecord['lastError'],
  ): Promise<void> {
    await this.#db.query(
      `UPDATE vector_store_files SET status = $3, error_code = $4, error_message = $5
       WHERE vector_store_id = $1 AND file_id = $2`,
      [vectorStoreId, fileId, status, error?.code ?? null, error?.message ?? null],
    );
  }

  async setAttributes(vectorStoreId: string, fileId: string, attributes: StoreFileRecord['attributes']): Promise<void> {
    await this.#db.query('UPDATE vector_store_files SET attributes = $3 WHERE vector_store_id = $1 AND file_id = $2', [
      vectorStoreId,
      fileId,
      JSON.stringify(attributes),
    ]);
  }

  async delete(vectorStoreId: string, fileId: string): Promise<void> {
    await this.#db.query('DELETE FROM vector_store_files WHERE vector_store_id = $1 AND file_id = $2', [
      vectorStoreId,
      fileId,
    ]);
  }

  /** Leases one link still waiting for its text (its creator gone, or a batch's), any store's. */
  async claimPending(now: number, leaseMs: number): Promise<StoreFileRecord | undefined> {
    const [row] = await this.#db.query<{ vector_store_id: string; file_id: string }>(
      `SELECT vector_store_id, file_id FROM vector_store_files
       WHERE document_id IS NULL AND status IS NULL AND lease_until < $1 ORDER BY lease_until LIMIT 1`,
      [now],
    );
    if (!row) return undefined;
    const claimed = await this.#db.query(
      `UPDATE vector_store_files SET lease_until = $4
       WHERE vector_store_id = $1 AND file_id = $2 AND document_id IS NULL AND status IS NULL AND lease_until < $3
       RETURNING file_id`,
      [row.vector_store_id, row.file_id, now, now + leaseMs],
    );
    return claimed.length > 0 ? this.get(row.vector_store_id, row.file_id) : undefined;
  }
}
