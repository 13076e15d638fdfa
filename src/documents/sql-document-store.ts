import { randomInt } from 'node:crypto';
import type { Chunk, Tenant } from '../retrieval/index.js';
import {
  byIdsFirst,
  type Db,
  type DialectStatements,
  placeholderList,
  type Row,
  transaction,
} from '../storage/index.js';
import type { ChunkMatch, DocumentRecord, DocumentStore, IngestionJob } from './types.js';

/**
 * A user's next document version (the chat cache key of their RAG answers): random, never a count. Erasing the
 * user deletes their version row, and a count starting again at 1 would repeat a version that answers still in
 * the response cache were keyed with, citing the erased documents. At least 2^32, above any count the column
 * held before versions were random (so none of those repeats either), and below 2^52: exact as a JavaScript
 * number and as a BIGINT, and with 52 random bits as unlikely to repeat as memory's random versions.
 */
function freshVersion(): number {
  return randomInt(1, 2 ** 20) * 2 ** 32 + randomInt(0, 2 ** 32);
}

const DOC_COLUMNS = `id, account_id, user_id, title, content_type, size_bytes, metadata, status, chunk_count,
  chunks_embedded, failure_code, failure_message, created_at, chunk_chars, overlap_chars`;

function toDocument(row: Row): DocumentRecord {
  const code = row.failure_code as string | null;
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    userId: row.user_id as string,
    title: row.title as string,
    contentType: row.content_type as string,
    sizeBytes: Number(row.size_bytes),
    metadata: JSON.parse(row.metadata as string) as Record<string, unknown>,
    status: row.status as DocumentRecord['status'],
    chunkCount: Number(row.chunk_count),
    chunksEmbedded: Number(row.chunks_embedded),
    failure: code ? { code, message: (row.failure_message as string | null) ?? '' } : null,
    createdAt: Number(row.created_at),
    chunking:
      row.chunk_chars === null || row.chunk_chars === undefined
        ? null
        : { chars: Number(row.chunk_chars), overlapChars: Number(row.overlap_chars) },
  };
}

function toJob(row: Row): IngestionJob {
  return {
    doc: toDocument(row),
    text: row.text as string,
    pages: JSON.parse(row.pages as string) as number[],
    attempts: Number(row.attempts),
  };
}

function toChunk(row: Row): Chunk {
  return {
    id: row.id as string,
    documentId: row.document_id as string,
    ordinal: Number(row.ordinal),
    text: row.text as string,
    charStart: Number(row.char_start),
    charEnd: Number(row.char_end),
    page: row.page === null || row.page === undefined ? null : Number(row.page),
  };
}

/** The statements whose text differs by dialect. */
interface DocumentStatements {
  /** After the claim's subquery: a lock so two workers (lanes, replicas) never take the same job. */
  claimLock: string;
  /**
   * putChunks, in one transaction. SQLite runs them per document and per chunk with positional `?`;
   * PostgreSQL runs each once for all of them, over arrays.
   */
  putChunks: {
    /** Which of the documents are still there (PostgreSQL: locked against their delete until the commit). */
    present: string;
    /** The documents' earlier chunks. */
    deleteChunks: string;
    /** The chunks: id, document_id, account_id, user_id, ordinal, text, char_start, char_end, page. */
    insertChunks: string;
    /** Each document's chunk count (with chunks_embedded back to 0). */
    setCounts: string;
  };
}

const statements: DialectStatements<DocumentStatements> = {
  sqlite: {
    claimLock: '',
    putChunks: {
      present: 'SELECT 1 FROM rag_documents WHERE id = ?',
      deleteChunks: 'DELETE FROM rag_chunks WHERE document_id = ?',
      insertChunks: `INSERT INTO rag_chunks (id, document_id, account_id, user_id, ordinal, text, char_start, char_end, page)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      setCounts: 'UPDATE rag_documents SET chunk_count = ?, chunks_embedded = 0 WHERE id = ?',
    },
  },
  postgres: {
    claimLock: 'FOR UPDATE SKIP LOCKED',
    putChunks: {
      present: 'SELECT id FROM rag_documents WHERE id = ANY($1::text[]) FOR KEY SHARE',
      deleteChunks: 'DELETE FROM rag_chunks WHERE document_id = ANY($1::text[])',
      insertChunks: `INSERT INTO rag_chunks (id, document_id, account_id, user_id, ordinal, text, char_start, char_end, page)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::text[], $7::int[],
                              $8::int[], $9::int[])`,
      setCounts: `UPDATE rag_documents d SET chunk_count = u.n, chunks_embedded = 0
         FROM unnest($1::text[], $2::int[]) AS u(id, n) WHERE d.id = u.id`,
    },
  },
};

/**
 * Documents, chunks and jobs in the service's database (SQLite or PostgreSQL, the same SQL where it
 * can be). Retrieval is SqlChunkIndex's (or another ChunkIndex's).
 */
export class SqlDocumentStore implements DocumentStore {
  readonly #db: Db;
  readonly #sql: DocumentStatements;

  constructor(db: Db) {
    this.#db = db;
    this.#sql = statements[db.dialect];
  }

  async insert(doc: DocumentRecord, text: string, pages: readonly number[]): Promise<void> {
    await this.#db.query(
      `INSERT INTO rag_documents (id, account_id, user_id, title, content_type, size_bytes, metadata, text, pages,
        status, chunk_count, chunks_embedded, lease_until, attempts, created_at, chunk_chars, overlap_chars)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $10, 'processing', 0, 0, 0, 0, $9, $11, $12)`,
      [
        doc.id,
        doc.accountId,
        doc.userId,
        doc.title,
        doc.contentType,
        doc.sizeBytes,
        JSON.stringify(doc.metadata),
        text,
        doc.createdAt,
        JSON.stringify(pages),
        doc.chunking?.chars ?? null,
        doc.chunking?.overlapChars ?? null,
      ],
    );
  }

  async get(tenant: Tenant, id: string): Promise<DocumentRecord | undefined> {
    const rows = await this.#db.query(
      `SELECT ${DOC_COLUMNS} FROM rag_documents WHERE id = $1 AND account_id = $2 AND user_id = $3`,
      [id, tenant.accountId, tenant.userId],
    );
    return rows[0] ? toDocument(rows[0]) : undefined;
  }

  async list(tenant: Tenant): Promise<DocumentRecord[]> {
    const rows = await this.#db.query(
      `SELECT ${DOC_COLUMNS} FROM rag_documents WHERE account_id = $1 AND user_id = $2 ORDER BY created_at, id`,
      [tenant.accountId, tenant.userId],
    );
    return rows.map(toDocument);
  }

  async delete(tenant: Tenant, id: string): Promise<boolean> {
    const rows = await this.#db.query(
      'DELETE FROM rag_documents WHERE id = $1 AND account_id = $2 AND user_id = $3 RETURNING id',
      [id, tenant.accountId, tenant.userId],
    );
    return rows.length > 0;
  }

  async version(tenant: Tenant): Promise<number> {
    const rows = await this.#db.query<{ version: number }>(
      'SELECT version FROM rag_user_versions WHERE account_id = $1 AND user_id = $2',
      [tenant.accountId, tenant.userId],
    );
    return Number(rows[0]?.version ?? 0);
  }

  async bumpVersion(tenant: Tenant): Promise<void> {
    await this.#db.query(
      `INSERT INTO rag_user_versions (account_id, user_id, version) VALUES ($1, $2, $3)
       ON CONFLICT (account_id, user_id) DO UPDATE SET version = $3`,
      [tenant.accountId, tenant.userId, freshVersion()],
    );
  }

  async refreshVersion(tenant: Tenant): Promise<void> {
    await this.#db.query('UPDATE rag_user_versions SET version = $3 WHERE account_id = $1 AND user_id = $2', [
      tenant.accountId,
      tenant.userId,
      freshVersion(),
    ]);
  }

  async deleteTenant(tenant: Tenant): Promise<number> {
    // Their chunks go with them (ON DELETE CASCADE), and so do the jobs of those still `processing`.
    const rows = await this.#db.query('DELETE FROM rag_documents WHERE account_id = $1 AND user_id = $2 RETURNING id', [
      tenant.accountId,
      tenant.userId,
    ]);
    return rows.length;
  }

  async deleteVersion(tenant: Tenant): Promise<void> {
    // Not while the user has a document (one uploaded during the erase): a stored document always has its
    // version row, or answers drawn from it would be cached under the version of a user without documents.
    await this.#db.query(
      `DELETE FROM rag_user_versions WHERE account_id = $1 AND user_id = $2
          AND NOT EXISTS (SELECT 1 FROM rag_documents WHERE account_id = $1 AND user_id = $2)`,
      [tenant.accountId, tenant.userId],
    );
  }

  async exportPage(tenant: Tenant, after: DocumentRecord | undefined, limit: number): Promise<DocumentRecord[]> {
    const rows = await this.#db.query(
      `SELECT ${DOC_COLUMNS} FROM rag_documents WHERE account_id = $1 AND user_id = $2
          AND (created_at > $3 OR (created_at = $3 AND id > $4))
        ORDER BY created_at, id LIMIT $5`,
      [tenant.accountId, tenant.userId, after?.createdAt ?? -1, after?.id ?? '', limit],
    );
    return rows.map(toDocument);
  }

  async text(tenant: Tenant, id: string): Promise<string | undefined> {
    const rows = await this.#db.query<{ text: string }>(
      'SELECT text FROM rag_documents WHERE id = $1 AND account_id = $2 AND user_id = $3',
      [id, tenant.accountId, tenant.userId],
    );
    return rows[0]?.text;
  }

  async setMetadata(tenant: Tenant, id: string, metadata: Record<string, unknown>): Promise<boolean> {
    const rows = await this.#db.query(
      'UPDATE rag_documents SET metadata = $4 WHERE id = $1 AND account_id = $2 AND user_id = $3 RETURNING id',
      [id, tenant.accountId, tenant.userId, JSON.stringify(metadata)],
    );
    return rows.length > 0;
  }

  async claim(now: number, leaseMs: number): Promise<IngestionJob | undefined> {
    return (await this.#claim('', now, leaseMs, Number.MAX_SAFE_INTEGER, 1))[0];
  }

  async claimUnchunked(now: number, leaseMs: number, maxBytes: number, limit: number): Promise<IngestionJob[]> {
    const [first] = await this.#claim('AND chunk_count = 0', now, leaseMs, Number.MAX_SAFE_INTEGER, 1);
    if (!first) return [];
    if (first.doc.sizeBytes > maxBytes || limit <= 1) return [first];
    return [first, ...(await this.#claim('AND chunk_count = 0', now, leaseMs, maxBytes, limit - 1))];
  }

  /** Leases up to `limit` processing documents of at most `maxBytes` whose lease ran out, oldest first. */
  async #claim(condition: string, now: number, leaseMs: number, maxBytes: number, limit: number) {
    // SKIP LOCKED: two workers (lanes, replicas) never take the same job; SQLite has one writer per file anyway.
    const lock = this.#sql.claimLock;
    const rows = await this.#db.query(
      `UPDATE rag_documents SET lease_until = $1, attempts = attempts + 1
       WHERE id IN (SELECT id FROM rag_documents
                    WHERE status = 'processing' AND lease_until < $2 AND size_bytes <= $3 ${condition}
                    ORDER BY created_at LIMIT $4 ${lock})
       RETURNING ${DOC_COLUMNS}, text, pages, attempts`,
      [now + leaseMs, now, maxBytes, limit],
    );
    // RETURNING's order is not the subquery's: oldest first again.
    return rows.map(toJob).sort((x, y) => x.doc.createdAt - y.doc.createdAt);
  }

  async existing(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.#db.query<{ id: string }>(
      `SELECT id FROM rag_documents WHERE id IN (${placeholderList(ids.length)})`,
      [...ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  async countProcessing(): Promise<number> {
    const rows = await this.#db.query<{ n: number }>(
      "SELECT count(*) AS n FROM rag_documents WHERE status = 'processing'",
    );
    return Number(rows[0]?.n ?? 0);
  }

  async releaseLeases(): Promise<void> {
    await this.#db.query("UPDATE rag_documents SET lease_until = 0 WHERE status = 'processing'");
  }

  async release(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#db.query(`UPDATE rag_documents SET lease_until = 0 WHERE id IN (${placeholderList(ids.length)})`, [
      ...ids,
    ]);
  }

  async extendLease(id: string, until: number): Promise<void> {
    await this.#db.query('UPDATE rag_documents SET lease_until = $1 WHERE id = $2', [until, id]);
  }

  async putChunks(documents: ReadonlyArray<{ doc: DocumentRecord; chunks: readonly Chunk[] }>): Promise<void> {
    if (documents.length === 0) return;
    const rowsOf = (kept: typeof documents) =>
      kept.flatMap(({ doc, chunks }) =>
        chunks.map((c) => [c.id, doc.id, doc.accountId, doc.userId, c.ordinal, c.text, c.charStart, c.charEnd, c.page]),
      );
    // A document deleted since its job read it (its owner deleted it during the index write) is left out:
    // its chunks have nowhere to go, and the others of the claim must not fail with it.
    const db = this.#db;
    const sql = this.#sql.putChunks;
    if (db.dialect === 'sqlite') {
      // One transaction: a crash leaves either no chunks or all of them, of every document.
      const stmtExists = db.sqlite.prepare(sql.present);
      const stmtDelete = db.sqlite.prepare(sql.deleteChunks);
      const stmtInsert = db.sqlite.prepare(sql.insertChunks);
      const stmtCount = db.sqlite.prepare(sql.setCounts);
      transaction(db, () => {
        const kept = documents.filter(({ doc }) => stmtExists.get(doc.id) !== undefined);
        for (const { doc } of kept) stmtDelete.run(doc.id);
        for (const row of rowsOf(kept)) stmtInsert.run(...row);
        for (const { doc, chunks } of kept) stmtCount.run(chunks.length, doc.id);
      });
      return;
    }
    // Four statements however many chunks and documents (a statement per chunk was a round trip each).
    await transaction(db, async (tx) => {
      // Held until the commit: a delete of one of them waits for it, then takes its chunks with it.
      const present = await tx.query<{ id: string }>(sql.present, [documents.map((d) => d.doc.id)]);
      const ids = new Set(present.map((r) => r.id));
      const kept = documents.filter(({ doc }) => ids.has(doc.id));
      const rows = rowsOf(kept);
      const column = (i: number) => rows.map((r) => r[i]);
      await tx.query(sql.deleteChunks, [kept.map((d) => d.doc.id)]);
      await tx.query(sql.insertChunks, [0, 1, 2, 3, 4, 5, 6, 7, 8].map(column));
      await tx.query(sql.setCounts, [kept.map((d) => d.doc.id), kept.map((d) => d.chunks.length)]);
    });
  }

  async unembedded(documentId: string, limit: number): Promise<Chunk[]> {
    const rows = await this.#db.query(
      `SELECT id, document_id, ordinal, text, char_start, char_end, page FROM rag_chunks
       WHERE document_id = $1 AND embedded = 0 ORDER BY ordinal LIMIT $2`,
      [documentId, limit],
    );
    return rows.map(toChunk);
  }

  async markEmbedded(documentId: string, chunkIds: readonly string[]): Promise<void> {
    if (chunkIds.length > 0) {
      const placeholders = placeholderList(chunkIds.length, 2);
      await this.#db.query(`UPDATE rag_chunks SET embedded = 1 WHERE document_id = $1 AND id IN (${placeholders})`, [
        documentId,
        ...chunkIds,
      ]);
    }
    await this.#db.query(
      `UPDATE rag_documents SET chunks_embedded =
        (SELECT count(*) FROM rag_chunks WHERE document_id = $1 AND embedded = 1) WHERE id = $1`,
      [documentId],
    );
  }

  async finish(id: string, result: { status: 'ready' } | { status: 'failed'; code: string; message: string }) {
    await this.#db.query(
      `UPDATE rag_documents SET status = $1, failure_code = $2, failure_message = $3, lease_until = 0 WHERE id = $4`,
      [
        result.status,
        result.status === 'failed' ? result.code : null,
        result.status === 'failed' ? result.message : null,
        id,
      ],
    );
  }

  async chunks(tenant: Tenant, ids: readonly string[]): Promise<ChunkMatch[]> {
    if (ids.length === 0) return [];
    const placeholders = placeholderList(ids.length, 3);
    const plus = byIdsFirst(this.#db);
    const rows = await this.#db.query(
      `SELECT c.id, c.document_id, c.ordinal, c.text, c.char_start, c.char_end, c.page, d.title
       FROM rag_chunks c JOIN rag_documents d ON d.id = c.document_id
       WHERE ${plus}c.account_id = $1 AND ${plus}c.user_id = $2 AND c.id IN (${placeholders})`,
      [tenant.accountId, tenant.userId, ...ids],
    );
    return rows.map((r) => ({ ...toChunk(r), title: r.title as string, score: 0 }));
  }
}
