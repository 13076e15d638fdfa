import type BetterSqlite3 from 'better-sqlite3';
import type { Db, Row } from '../storage/index.js';
import { reciprocalRankFusion } from './fusion.js';
import type { Chunk, ChunkHit, ChunkIndex, ChunkQuery, Tenant } from './types.js';
import { VectorCache } from './vector-cache.js';
import { rerank, VectorSet } from './vector-set.js';

/** Candidates taken from each ranking before a hybrid search fuses them. */
const CANDIDATES = 50;
/**
 * Vectors kept in memory across tenants (least recently searched go first): ~0.5 KB each at 384 dims
 * (int8, its scale and score, the ids), so ~250 MB at most.
 */
const CACHED_VECTORS = 500_000;
/** Candidates of the int8 scan reranked exactly (at least; 2k when k is larger). */
const RERANK = 100;

/** Words of a query, for a lexical OR query on either dialect (no operator of the user's reaches SQL). */
export function queryTerms(query: string): string[] {
  return [...new Set((query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 64))];
}

/**
 * English stop words (PostgreSQL's `english` dictionary drops the same; so does Qdrant's BM25). In an OR
 * query they match nearly every chunk, and FTS5 then scores all of a user's chunks: ~100 ms at 100k.
 */
const STOP_WORDS = new Set(
  `a about above after again against all am an and any are as at be because been before being below between
  both but by can did do does doing down during each few for from further had has have having he her here hers
  herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
  once only or other our ours ourselves out over own same she should so some such than that the their theirs
  them themselves then there these they this those through to too under until up very was we were what when
  where which while who whom why will with you your yours yourself yourselves`.split(/\s+/),
);

/** The query's words for FTS5: without stop words, unless it has nothing else ("to be or not to be"). */
function ftsTerms(query: string): string[] {
  const terms = queryTerms(query);
  const content = terms.filter((t) => !STOP_WORDS.has(t));
  return content.length > 0 ? content : terms;
}

function toBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

function fromBytes(bytes: Uint8Array): Float32Array {
  // Copied: the driver's buffer need not be 4-byte aligned.
  return new Float32Array(new Uint8Array(bytes).buffer);
}

/** The refusal of an index built with another embedding model, saying what to do. */
export function modelMismatch(
  recorded: { id: string; dimension: number },
  configured: { id: string; dimension: number },
): Error {
  const dims =
    recorded.dimension === configured.dimension
      ? `${recorded.dimension} dimensions`
      : `${recorded.dimension} and ${configured.dimension} dimensions`;
  return new Error(
    `the document index was built with the embedding model ${recorded.id}, but ${configured.id} is configured ` +
      `(${dims}); set PVAI_EMBEDDING_MODEL back to ${recorded.id}, or re-create the index: with ` +
      `${recorded.id} configured delete every document, then switch`,
  );
}

/**
 * The ChunkIndex in the service's own database (the embedded default, and PostgreSQL without Qdrant).
 * rag_index_chunks holds per chunk its tenant, document and vector; lexical search is FTS5 bm25 over a
 * contentless table on SQLite (the text itself stays in the document store) and ts_rank_cd over a
 * GIN-indexed tsvector on PostgreSQL. Dense: the tenant's vectors are held in memory in int8 (VectorSet,
 * kept current by VectorCache's generations), scanned with WebAssembly SIMD, and the best 100 reranked
 * by their exact float32 vectors (unit length: the dot product is the cosine), read back by id. Why this
 * and not sqlite-vec or HNSW: docs/decisions.md. Hybrid: both rankings fused by RRF. Every statement
 * is scoped by tenant.
 */
export class SqlChunkIndex implements ChunkIndex {
  readonly name: string;
  readonly #db: Db;
  #dimension: number | undefined;
  readonly #vectors: VectorCache;

  constructor(db: Db, options: { cachedVectors?: number } = {}) {
    this.#db = db;
    this.name = db.dialect;
    this.#vectors = new VectorCache(options.cachedVectors ?? CACHED_VECTORS);
  }

  async prepare(embedding?: { id: string; dimension: number }): Promise<void> {
    if (!embedding) return;
    const db = this.#db;
    // First writer wins (ON CONFLICT DO NOTHING): replicas starting together record one model.
    for (const [key, value] of [
      ['embedding_model', embedding.id],
      ['embedding_dimension', String(embedding.dimension)],
    ]) {
      await db.query('INSERT INTO rag_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [
        key,
        value,
      ]);
    }
    const rows = await db.query<{ key: string; value: string }>(
      "SELECT key, value FROM rag_settings WHERE key IN ('embedding_model', 'embedding_dimension')",
    );
    const setting = (key: string) => rows.find((r) => r.key === key)?.value;
    const recorded = {
      id: setting('embedding_model') ?? embedding.id,
      dimension: Number(setting('embedding_dimension') ?? embedding.dimension),
    };
    if (recorded.id !== embedding.id || recorded.dimension !== embedding.dimension) {
      // Nothing embedded yet (every document deleted, or none ever embedded): the new model takes over.
      const any = await db.query('SELECT 1 AS x FROM rag_index_chunks WHERE embedding IS NOT NULL LIMIT 1');
      if (any.length > 0) throw modelMismatch(recorded, embedding);
      await db.query("UPDATE rag_settings SET value = $1 WHERE key = 'embedding_model'", [embedding.id]);
      await db.query("UPDATE rag_settings SET value = $1 WHERE key = 'embedding_dimension'", [
        String(embedding.dimension),
      ]);
    }
    this.#dimension = embedding.dimension;
  }

  async putChunks(tenant: Tenant, documentId: string, chunks: readonly Chunk[]): Promise<void> {
    const db = this.#db;
    if (db.dialect === 'sqlite') {
      const s = this.#sqliteStatements(db.sqlite);
      // One transaction: the document's old entries go and the new ones come together.
      const generation = db.sqlite.transaction(() => {
        s.removeDocument(tenant, documentId);
        for (const c of chunks) {
          const { lastInsertRowid } = s.insertChunk.run(tenant.accountId, tenant.userId, documentId, c.id);
          s.insertFts.run(lastInsertRowid, c.text);
        }
        return s.bump(tenant);
      })();
      this.#vectors.applied(tenant, generation, (set) => set.removeDocument(documentId));
      return;
    }
    const generation = await this.#pgTransaction(async (q) => {
      await q('DELETE FROM rag_index_chunks WHERE account_id = $1 AND user_id = $2 AND document_id = $3', [
        tenant.accountId,
        tenant.userId,
        documentId,
      ]);
      if (chunks.length > 0) {
        await q(
          `INSERT INTO rag_index_chunks (account_id, user_id, document_id, chunk_id, tsv)
           SELECT $1, $2, $3, u.id, to_tsvector('english', u.text) FROM unnest($4::text[], $5::text[]) AS u(id, text)`,
          [tenant.accountId, tenant.userId, documentId, chunks.map((c) => c.id), chunks.map((c) => c.text)],
        );
      }
      return pgBump(q, tenant);
    });
    this.#vectors.applied(tenant, generation, (set) => set.removeDocument(documentId));
  }

  async putVectors(
    tenant: Tenant,
    documentId: string,
    vectors: ReadonlyArray<{ chunkId: string; vector: Float32Array }>,
  ): Promise<void> {
    const dimension = this.#dimension;
    for (const { vector } of vectors) {
      if (dimension !== undefined && vector.length !== dimension) {
        throw new Error(`a vector of ${vector.length} dimensions for an index of ${dimension}`);
      }
    }
    const db = this.#db;
    // Only chunks that were put (and are still there) take a vector, in the database and in memory alike.
    let stored: Set<string>;
    let generation: number;
    if (db.dialect === 'sqlite') {
      const s = this.#sqliteStatements(db.sqlite);
      [stored, generation] = db.sqlite.transaction((): [Set<string>, number] => {
        const done = new Set<string>();
        for (const { chunkId, vector } of vectors) {
          const { changes } = s.setVector.run(toBytes(vector), tenant.accountId, tenant.userId, documentId, chunkId);
          if (changes > 0) done.add(chunkId);
        }
        return [done, s.bump(tenant)];
      })();
    } else {
      [stored, generation] = await this.#pgTransaction(async (q): Promise<[Set<string>, number]> => {
        const rows = (await q(
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
        )) as Array<{ chunk_id: string }>;
        return [new Set(rows.map((r) => r.chunk_id)), await pgBump(q, tenant)];
      });
    }
    this.#vectors.applied(tenant, generation, (set) => {
      for (const { chunkId, vector } of vectors) {
        if (stored.has(chunkId)) set.upsert(chunkId, documentId, vector);
      }
    });
  }

  async deleteDocument(tenant: Tenant, documentId: string): Promise<void> {
    const db = this.#db;
    let generation: number;
    if (db.dialect === 'sqlite') {
      const s = this.#sqliteStatements(db.sqlite);
      generation = db.sqlite.transaction(() => {
        s.removeDocument(tenant, documentId);
        return s.bump(tenant);
      })();
    } else {
      generation = await this.#pgTransaction(async (q) => {
        await q('DELETE FROM rag_index_chunks WHERE account_id = $1 AND user_id = $2 AND document_id = $3', [
          tenant.accountId,
          tenant.userId,
          documentId,
        ]);
        return pgBump(q, tenant);
      });
    }
    this.#vectors.applied(tenant, generation, (set) => set.removeDocument(documentId));
  }

  async deleteTenant(tenant: Tenant): Promise<void> {
    const db = this.#db;
    if (db.dialect === 'sqlite') {
      const s = this.#sqliteStatements(db.sqlite);
      db.sqlite.transaction(() => {
        s.deleteTenantFts.run(tenant.accountId, tenant.userId);
        s.deleteTenant.run(tenant.accountId, tenant.userId);
        s.bump(tenant);
      })();
    } else {
      await this.#pgTransaction(async (q) => {
        await q('DELETE FROM rag_index_chunks WHERE account_id = $1 AND user_id = $2', [
          tenant.accountId,
          tenant.userId,
        ]);
        await pgBump(q, tenant);
      });
    }
    this.#vectors.forget(tenant);
  }

  async search(tenant: Tenant, query: ChunkQuery): Promise<ChunkHit[]> {
    const mode = query.mode ?? 'hybrid';
    const { k, vector } = query;
    if (k <= 0) return [];
    if (mode === 'lexical') return this.#lexical(tenant, query.text, k);
    if (mode === 'dense') return vector ? this.#dense(tenant, vector, k) : [];
    const want = Math.max(k, CANDIDATES);
    const lexical = await this.#lexical(tenant, query.text, want);
    const dense = vector ? await this.#dense(tenant, vector, want) : [];
    return reciprocalRankFusion([lexical, dense]).slice(0, k);
  }

  async close(): Promise<void> {
    this.#vectors.clear();
  }

  async #lexical(tenant: Tenant, text: string, k: number): Promise<ChunkHit[]> {
    const terms = this.#db.dialect === 'sqlite' ? ftsTerms(text) : queryTerms(text);
    if (terms.length === 0) return [];
    if (this.#db.dialect === 'sqlite') {
      // Each term quoted: FTS5 syntax in the user's query is text, not operators. bm25() is lower-is-better.
      const match = terms.map((t) => `"${t}"`).join(' OR ');
      const rows = this.#sqliteStatements(this.#db.sqlite).lexical.all(
        match,
        tenant.accountId,
        tenant.userId,
        k,
      ) as Array<{
        id: string;
        s: number;
      }>;
      return rows.map((r) => ({ chunkId: r.id, score: -Number(r.s) }));
    }
    const rows = await this.#db.query<{ id: string; s: number }>(
      `SELECT chunk_id AS id, ts_rank_cd(tsv, q) AS s FROM rag_index_chunks, to_tsquery('english', $1) q
       WHERE tsv @@ q AND account_id = $2 AND user_id = $3 ORDER BY s DESC, seq LIMIT $4`,
      [terms.join(' | '), tenant.accountId, tenant.userId, k],
    );
    return rows.map((r) => ({ chunkId: r.id, score: Number(r.s) }));
  }

  /**
   * The tenant's vectors from memory: the generation read first, then (when it moved) the rows, so a
   * write landing in between makes the next search load again rather than keep stale rows.
   */
  async #dense(tenant: Tenant, vector: Float32Array, k: number): Promise<ChunkHit[]> {
    const db = this.#db;
    let set: VectorSet | undefined;
    if (db.dialect === 'sqlite') {
      const s = this.#sqliteStatements(db.sqlite);
      const generation = s.generation(tenant);
      set = this.#vectors.get(tenant, generation);
      if (!set) {
        set = new VectorSet(vector.length);
        for (const row of s.vectors.iterate(tenant.accountId, tenant.userId) as Iterable<VectorRow>) {
          addRow(set, row);
        }
        if (set.size > 0) this.#vectors.put(tenant, generation, set);
      }
    } else {
      const rows = await db.query<{ generation: string }>(
        'SELECT generation FROM rag_index_tenants WHERE account_id = $1 AND user_id = $2',
        [tenant.accountId, tenant.userId],
      );
      const generation = Number(rows[0]?.generation ?? 0);
      set = this.#vectors.get(tenant, generation);
      if (!set) {
        set = new VectorSet(vector.length);
        const stored = await db.query<VectorRow>(
          `SELECT chunk_id, document_id, embedding FROM rag_index_chunks
           WHERE account_id = $1 AND user_id = $2 AND embedding IS NOT NULL`,
          [tenant.accountId, tenant.userId],
        );
        for (const row of stored) addRow(set, row);
        if (set.size > 0) this.#vectors.put(tenant, generation, set);
      }
    }
    if (set.dimension !== vector.length) {
      throw new Error(`a query vector of ${vector.length} dimensions for an index of ${set.dimension}`);
    }
    // The int8 scan's best, reranked by their exact float32 vectors read back (tenant-filtered) by id.
    const candidates = set.candidates(vector, Math.max(RERANK, 2 * k));
    if (candidates.length === 0) return [];
    const ids = candidates.map((c) => c.id);
    const rows =
      db.dialect === 'sqlite'
        ? (this.#sqliteStatements(db.sqlite).floats.all(
            tenant.accountId,
            tenant.userId,
            JSON.stringify(ids),
          ) as VectorRow[])
        : await db.query<VectorRow>(
            `SELECT chunk_id, document_id, embedding FROM rag_index_chunks
             WHERE account_id = $1 AND user_id = $2 AND chunk_id = ANY($3::text[]) AND embedding IS NOT NULL`,
            [tenant.accountId, tenant.userId, ids],
          );
    const floats = new Map(rows.map((r) => [r.chunk_id, fromBytes(r.embedding)]));
    return rerank(vector, candidates, (id) => floats.get(id), k).map((h) => ({ chunkId: h.id, score: h.score }));
  }

  #statements: ReturnType<typeof sqliteStatements> | undefined;

  #sqliteStatements(sqlite: BetterSqlite3.Database): ReturnType<typeof sqliteStatements> {
    this.#statements ??= sqliteStatements(sqlite);
    return this.#statements;
  }

  async #pgTransaction<T>(fn: (q: PgQuery) => Promise<T>): Promise<T> {
    const db = this.#db;
    if (db.dialect !== 'postgres') throw new Error('not PostgreSQL');
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await fn(async (sql, params) => (await client.query(sql, params)).rows as Row[]);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}

type PgQuery = (sql: string, params: unknown[]) => Promise<Row[]>;

/** Bumps the tenant's generation inside the write's transaction; the new value. */
async function pgBump(q: PgQuery, tenant: Tenant): Promise<number> {
  const rows = await q(
    `INSERT INTO rag_index_tenants (account_id, user_id, generation) VALUES ($1, $2, 1)
     ON CONFLICT (account_id, user_id) DO UPDATE SET generation = rag_index_tenants.generation + 1
     RETURNING generation`,
    [tenant.accountId, tenant.userId],
  );
  return Number(rows[0]?.generation);
}

interface VectorRow {
  chunk_id: string;
  document_id: string;
  embedding: Uint8Array;
}

function addRow(set: VectorSet, row: VectorRow): void {
  const bytes = row.embedding;
  // A view when the driver's buffer is 4-byte aligned (upsert copies it), else a copy.
  const vector =
    bytes.byteOffset % 4 === 0
      ? new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)
      : fromBytes(bytes);
  if (vector.length === set.dimension) set.upsert(row.chunk_id, row.document_id, vector);
}

/** SQLite's statements, prepared once (better-sqlite3 is synchronous: each runs in microseconds). */
function sqliteStatements(sqlite: BetterSqlite3.Database) {
  const tenantDoc = 'account_id = ? AND user_id = ? AND document_id = ?';
  const deleteDocumentFts = sqlite.prepare(
    `DELETE FROM rag_index_fts WHERE rowid IN (SELECT seq FROM rag_index_chunks WHERE ${tenantDoc})`,
  );
  const deleteDocument = sqlite.prepare(`DELETE FROM rag_index_chunks WHERE ${tenantDoc}`);
  const bump = sqlite.prepare(
    `INSERT INTO rag_index_tenants (account_id, user_id, generation) VALUES (?, ?, 1)
     ON CONFLICT (account_id, user_id) DO UPDATE SET generation = generation + 1 RETURNING generation`,
  );
  const generation = sqlite.prepare('SELECT generation FROM rag_index_tenants WHERE account_id = ? AND user_id = ?');
  return {
    insertChunk: sqlite.prepare(
      'INSERT INTO rag_index_chunks (account_id, user_id, document_id, chunk_id) VALUES (?, ?, ?, ?)',
    ),
    insertFts: sqlite.prepare('INSERT INTO rag_index_fts (rowid, text) VALUES (?, ?)'),
    removeDocument(tenant: Tenant, documentId: string): void {
      deleteDocumentFts.run(tenant.accountId, tenant.userId, documentId);
      deleteDocument.run(tenant.accountId, tenant.userId, documentId);
    },
    setVector: sqlite.prepare(`UPDATE rag_index_chunks SET embedding = ? WHERE ${tenantDoc} AND chunk_id = ?`),
    deleteTenantFts: sqlite.prepare(
      'DELETE FROM rag_index_fts WHERE rowid IN (SELECT seq FROM rag_index_chunks WHERE account_id = ? AND user_id = ?)',
    ),
    deleteTenant: sqlite.prepare('DELETE FROM rag_index_chunks WHERE account_id = ? AND user_id = ?'),
    /** Inside the write's transaction: the tenant's new generation. */
    bump(tenant: Tenant): number {
      const row = bump.get(tenant.accountId, tenant.userId) as { generation: number };
      return Number(row.generation);
    },
    generation(tenant: Tenant): number {
      const row = generation.get(tenant.accountId, tenant.userId) as { generation: number } | undefined;
      return Number(row?.generation ?? 0);
    },
    floats: sqlite.prepare(
      `SELECT chunk_id, document_id, embedding FROM rag_index_chunks
       WHERE account_id = ? AND user_id = ? AND chunk_id IN (SELECT value FROM json_each(?)) AND embedding IS NOT NULL`,
    ),
    vectors: sqlite.prepare(
      `SELECT chunk_id, document_id, embedding FROM rag_index_chunks
       WHERE account_id = ? AND user_id = ? AND embedding IS NOT NULL`,
    ),
    lexical: sqlite.prepare(
      `SELECT c.chunk_id AS id, bm25(rag_index_fts) AS s FROM rag_index_fts
       JOIN rag_index_chunks c ON c.seq = rag_index_fts.rowid
       WHERE rag_index_fts MATCH ? AND c.account_id = ? AND c.user_id = ?
       ORDER BY s, c.seq LIMIT ?`,
    ),
  };
}
