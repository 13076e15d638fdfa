import type BetterSqlite3 from 'better-sqlite3';
import { type Db, type PostgresDb, type SqliteDb, type Transaction, transaction } from '../../storage/index.js';
import type { Tenant } from '../types.js';

/** A chunk's row as the index reads it back: its analysed terms (space-separated) and its float32 vector. */
export interface IndexRow {
  chunk_id: string;
  document_id: string;
  terms: string;
  embedding: Uint8Array | null;
}

interface VectorRow {
  chunk_id: string;
  embedding: Uint8Array;
}

/** A document's chunks with their analysed terms, as the index writes them. */
interface AnalysedDocument {
  documentId: string;
  chunks: ReadonlyArray<{ id: string; terms: readonly string[] }>;
}

/**
 * What SqlChunkIndex reads and writes in `rag_index_chunks` and `rag_index_tenants`, one implementation per
 * dialect, chosen once. Every write is one transaction that also bumps the tenant's generation and returns
 * it: the in-memory sets of that tenant (TenantCache) are current exactly when they hold that generation.
 * Every statement is scoped by the tenant.
 */
export interface IndexRows {
  /** Replaces the documents' chunks (their old rows go, the new ones come, together). */
  put(tenant: Tenant, documents: readonly AnalysedDocument[]): Promise<number>;
  /** Sets the vectors of chunks that were put and are still there; which those were, and the generation. */
  putVectors(
    tenant: Tenant,
    documentId: string,
    vectors: ReadonlyArray<{ chunkId: string; vector: Float32Array }>,
  ): Promise<{ stored: Set<string>; generation: number }>;
  deleteDocument(tenant: Tenant, documentId: string): Promise<number>;
  /** Every row of the tenant and its generation row: a cache elsewhere reads 0, unlike what it holds, and reloads. */
  deleteTenant(tenant: Tenant): Promise<void>;
  generation(tenant: Tenant): Promise<number>;
  /**
   * Hands each of the tenant's rows, in insertion order, to `each`. SQLite walks its statement synchronously
   * within this call, row by row (100k rows are never one array), and is done before it returns: a lazy iterator
   * handed out across an `await` would be one prepared statement walked by two searches at once (documents and
   * memory search together), which better-sqlite3 refuses ("This statement is busy").
   */
  eachRow(tenant: Tenant, each: (row: IndexRow) => void): Promise<void>;
  /** The exact vectors of these chunks (of this tenant only), for reranking. */
  vectors(tenant: Tenant, chunkIds: readonly string[]): Promise<VectorRow[]>;
}

export function indexRowsFor(db: Db): IndexRows {
  return db.dialect === 'sqlite' ? sqliteRows(db) : postgresRows(db);
}

function toBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

/**
 * A tenant's first generation is random, not 1: forgetting a tenant deletes its generation row (nothing
 * of a forgotten user stays behind), and a later write must not restart at a number another process's
 * cache still holds for the old vectors. Below 2^52, so a PostgreSQL BIGINT reads back as an exact number.
 */
function firstGeneration(): number {
  return 1 + Math.floor(Math.random() * 2 ** 51);
}

/** SQLite: statements prepared once; better-sqlite3 is synchronous, so each write is one synchronous transaction. */
function sqliteRows(db: SqliteDb): IndexRows {
  const s = sqliteStatements(db.sqlite);
  const bump = (tenant: Tenant) =>
    Number((s.bump.get(tenant.accountId, tenant.userId, firstGeneration()) as { generation: number }).generation);
  return {
    async put(tenant, documents) {
      return transaction(db, () => {
        for (const d of documents) {
          s.deleteDocument.run(tenant.accountId, tenant.userId, d.documentId);
          for (const c of d.chunks) {
            s.insertChunk.run(tenant.accountId, tenant.userId, d.documentId, c.id, c.terms.join(' '));
          }
        }
        return bump(tenant);
      });
    },
    async putVectors(tenant, documentId, vectors) {
      return transaction(db, () => {
        const stored = new Set<string>();
        for (const { chunkId, vector } of vectors) {
          const { changes } = s.setVector.run(toBytes(vector), tenant.accountId, tenant.userId, documentId, chunkId);
          if (changes > 0) stored.add(chunkId);
        }
        return { stored, generation: bump(tenant) };
      });
    },
    async deleteDocument(tenant, documentId) {
      return transaction(db, () => {
        s.deleteDocument.run(tenant.accountId, tenant.userId, documentId);
        return bump(tenant);
      });
    },
    async deleteTenant(tenant) {
      transaction(db, () => {
        s.deleteTenant.run(tenant.accountId, tenant.userId);
        s.deleteGeneration.run(tenant.accountId, tenant.userId);
      });
    },
    async generation(tenant) {
      const row = s.generation.get(tenant.accountId, tenant.userId) as { generation: number } | undefined;
      return Number(row?.generation ?? 0);
    },
    async eachRow(tenant, each) {
      for (const row of s.rows.iterate(tenant.accountId, tenant.userId) as Iterable<IndexRow>) each(row);
    },
    async vectors(tenant, chunkIds) {
      return s.floats.all(tenant.accountId, tenant.userId, JSON.stringify(chunkIds)) as VectorRow[];
    },
  };
}

function sqliteStatements(sqlite: BetterSqlite3.Database) {
  const tenantDoc = 'account_id = ? AND user_id = ? AND document_id = ?';
  return {
    insertChunk: sqlite.prepare(
      'INSERT INTO rag_index_chunks (account_id, user_id, document_id, chunk_id, terms) VALUES (?, ?, ?, ?, ?)',
    ),
    deleteDocument: sqlite.prepare(`DELETE FROM rag_index_chunks WHERE ${tenantDoc}`),
    setVector: sqlite.prepare(`UPDATE rag_index_chunks SET embedding = ? WHERE ${tenantDoc} AND chunk_id = ?`),
    deleteTenant: sqlite.prepare('DELETE FROM rag_index_chunks WHERE account_id = ? AND user_id = ?'),
    deleteGeneration: sqlite.prepare('DELETE FROM rag_index_tenants WHERE account_id = ? AND user_id = ?'),
    bump: sqlite.prepare(
      `INSERT INTO rag_index_tenants (account_id, user_id, generation) VALUES (?, ?, ?)
       ON CONFLICT (account_id, user_id) DO UPDATE SET generation = generation + 1 RETURNING generation`,
    ),
    generation: sqlite.prepare('SELECT generation FROM rag_index_tenants WHERE account_id = ? AND user_id = ?'),
    floats: sqlite.prepare(
      `SELECT chunk_id, embedding FROM rag_index_chunks
       WHERE account_id = ? AND user_id = ? AND chunk_id IN (SELECT value FROM json_each(?)) AND embedding IS NOT NULL`,
    ),
    rows: sqlite.prepare(
      'SELECT chunk_id, document_id, terms, embedding FROM rag_index_chunks WHERE account_id = ? AND user_id = ? ORDER BY seq',
    ),
  };
}

/** PostgreSQL: each write one transaction of a few set-based statements, however many chunks it carries. */
function postgresRows(db: PostgresDb): IndexRows {
  const bump = async (tx: Transaction, tenant: Tenant): Promise<number> => {
    const rows = await tx.query<{ generation: string }>(
      `INSERT INTO rag_index_tenants (account_id, user_id, generation) VALUES ($1, $2, $3)
       ON CONFLICT (account_id, user_id) DO UPDATE SET generation = rag_index_tenants.generation + 1
       RETURNING generation`,
      [tenant.accountId, tenant.userId, firstGeneration()],
    );
    return Number(rows[0]?.generation);
  };
  return {
    put(tenant, documents) {
      const rows = documents.flatMap((d) => d.chunks.map((c) => [d.documentId, c.id, c.terms.join(' ')] as const));
      // Three statements however many documents: a commit is ~1.4 ms, most of a small document's indexing
      // when each had its own (0.74 MB/s for Cranfield's 1,400 abstracts).
      return transaction(db, async (tx) => {
        await tx.query(
          'DELETE FROM rag_index_chunks WHERE account_id = $1 AND user_id = $2 AND document_id = ANY($3::text[])',
          [tenant.accountId, tenant.userId, documents.map((d) => d.documentId)],
        );
        if (rows.length > 0) {
          await tx.query(
            `INSERT INTO rag_index_chunks (account_id, user_id, document_id, chunk_id, terms)
             SELECT $1, $2, u.doc, u.id, u.terms
             FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(doc, id, terms, i)
             ORDER BY u.i`,
            [tenant.accountId, tenant.userId, rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
          );
        }
        return bump(tx, tenant);
      });
    },
    putVectors(tenant, documentId, vectors) {
      return transaction(db, async (tx) => {
        const rows = await tx.query<{ chunk_id: string }>(
          `UPDATE rag_index_chunks c SET embedding = u.embedding
           FROM unnest($4::text[], $5::bytea[]) AS u(chunk_id, embedding)
           WHERE c.account_id = $1 AND c.user_id = $2 AND c.document_id = $3 AND c.chunk_id = u.chunk_id
           RETURNING c.chunk_id`,
          [
            tenant.accountId,
            tenant.userId,
            documentId,
            vectors.map((v) => v.chunkId),
            vectors.map((v) => toBytes(v.vector)),
          ],
        );
        return { stored: new Set(rows.map((r) => r.chunk_id)), generation: await bump(tx, tenant) };
      });
    },
    deleteDocument(tenant, documentId) {
      return transaction(db, async (tx) => {
        await tx.query('DELETE FROM rag_index_chunks WHERE account_id = $1 AND user_id = $2 AND document_id = $3', [
          tenant.accountId,
          tenant.userId,
          documentId,
        ]);
        return bump(tx, tenant);
      });
    },
    deleteTenant(tenant) {
      return transaction(db, async (tx) => {
        await tx.query('DELETE FROM rag_index_chunks WHERE account_id = $1 AND user_id = $2', [
          tenant.accountId,
          tenant.userId,
        ]);
        await tx.query('DELETE FROM rag_index_tenants WHERE account_id = $1 AND user_id = $2', [
          tenant.accountId,
          tenant.userId,
        ]);
      });
    },
    async generation(tenant) {
      const found = await db.query<{ generation: string }>(
        'SELECT generation FROM rag_index_tenants WHERE account_id = $1 AND user_id = $2',
        [tenant.accountId, tenant.userId],
      );
      return Number(found[0]?.generation ?? 0);
    },
    async eachRow(tenant, each) {
      const rows = await db.query<IndexRow>(
        `SELECT chunk_id, document_id, terms, embedding FROM rag_index_chunks
         WHERE account_id = $1 AND user_id = $2 ORDER BY seq`,
        [tenant.accountId, tenant.userId],
      );
      for (const row of rows) each(row);
    },
    vectors(tenant, chunkIds) {
      return db.query<VectorRow>(
        `SELECT chunk_id, embedding FROM rag_index_chunks
         WHERE account_id = $1 AND user_id = $2 AND chunk_id = ANY($3::text[]) AND embedding IS NOT NULL`,
        [tenant.accountId, tenant.userId, chunkIds],
      );
    },
  };
}
