import type BetterSqlite3 from 'better-sqlite3';
import type { Db, Row } from '../../storage/index.js';
import { analyze, queryTerms } from '../../text/index.js';
import { reciprocalRankFusion } from '../fusion.js';
import type { Chunk, ChunkHit, ChunkIndex, ChunkQuery, DocumentChunks, Tenant } from '../types.js';
import { PlannerStatistics } from './planner-statistics.js';
import { type PgQuery, pgBump, sqliteStatements } from './sql-chunk-index-sql.js';
import { TenantCache } from './tenant-cache.js';
import { TenantSets } from './tenant-sets.js';
import { rerank } from './vector-set.js';

/** Candidates taken from each ranking before a hybrid search fuses them. */
const CANDIDATES = 50;
/**
 * Chunks kept in memory across tenants (least recently searched go first): ~0.4 KB of int8 vector and
 * ~0.5 KB of postings and ids each (measured at 100k Cranfield chunks), so ~270 MB at most.
 */
const CACHED_CHUNKS = 300_000;
/** Candidates of the int8 scan reranked exactly (at least; 2k when k is larger). */
const RERANK = 100;

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
 * rag_index_chunks holds per chunk its tenant, document, analysed terms and vector; the chunk text
 * itself stays in the document store. A tenant's index is held in memory while it is searched
 * (TenantSets, kept current by TenantCache's generations): the terms as an inverted index scored by
 * BM25, the vectors in int8 scanned with WebAssembly SIMD and the best 100 reranked by their exact
 * float32 vectors (unit length: the dot product is the cosine), read back by id. Why this and not FTS5,
 * tsvector, sqlite-vec or HNSW: docs/decisions.md. Hybrid: both rankings fused by RRF. Every statement
 * is scoped by tenant.
 */
export class SqlChunkIndex implements ChunkIndex {
  readonly name: string;
  readonly #db: Db;
  #dimension: number | undefined;
  readonly #cache: TenantCache<TenantSets>;
  /** PostgreSQL only: ANALYZE after bulk writes (planner-statistics.ts says why). */
  readonly statistics: PlannerStatistics;

  constructor(
    db: Db,
    options: { cachedChunks?: number; onError?: (err: unknown) => void; statisticsCheckEvery?: number } = {},
  ) {
    this.#db = db;
    this.name = db.dialect;
    this.#cache = new TenantCache(options.cachedChunks ?? CACHED_CHUNKS);
    this.statistics = new PlannerStatistics(db, 'rag_index_chunks', {
      onError: options.onError,
      checkEvery: options.statisticsCheckEvery,
    });
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

  putChunks(tenant: Tenant, documentId: string, chunks: readonly Chunk[]): Promise<void> {
    return this.putDocuments(tenant, [{ documentId, chunks }]);
  }

  async putDocuments(tenant: Tenant, documents: readonly DocumentChunks[]): Promise<void> {
    if (documents.length === 0) return;
    const db = this.#db;
    const analysed = documents.map((d) => ({
      documentId: d.documentId,
      chunks: d.chunks.map((c) => ({ id: c.id, terms: analyze(c.text) })),
    }));
    let generation: number;
    if (db.dialect === 'sqlite') {
      const s = this.#sqliteStatements(db.sqlite);
      // One transaction: the documents' old entries go and the new ones come together.
      generation = db.sqlite.transaction(() => {
        for (const d of analysed) {
          s.deleteDocument.run(tenant.accountId, tenant.userId, d.documentId);
          for (const c of d.chunks) {
            s.insertChunk.run(tenant.accountId, tenant.userId, d.documentId, c.id, c.terms.join(' '));
          }
        }
        return s.bump(tenant);
      })();
    } else {
      const rows = analysed.flatMap((d) => d.chunks.map((c) => [d.documentId, c.id, c.terms.join(' ')] as const));
      // One transaction and three statements however many documents: a commit is ~1.4 ms, most of a
      // small document's indexing when each had its own (0.74 MB/s for Cranfield's 1,400 abstracts).
      generation = await this.#pgTransaction(async (q) => {
        await q(
          'DELETE FROM rag_index_chunks WHERE account_id = $1 AND user_id = $2 AND document_id = ANY($3::text[])',
          [tenant.accountId, tenant.userId, analysed.map((d) => d.documentId)],
        );
        if (rows.length > 0) {
          await q(
            `INSERT INTO rag_index_chunks (account_id, user_id, document_id, chunk_id, terms)
             SELECT $1, $2, u.doc, u.id, u.terms
             FROM unnest($3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(doc, id, terms, i)
             ORDER BY u.i`,
            [tenant.accountId, tenant.userId, rows.map((r) => r[0]), rows.map((r) => r[1]), rows.map((r) => r[2])],
          );
        }
        return pgBump(q, tenant);
      });
      this.statistics.wrote(rows.length);
    }
    this.#cache.applied(tenant, generation, (set) => {
      for (const d of analysed) set.putDocument(d.documentId, d.chunks);
    });
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
    this.#cache.applied(tenant, generation, (set) => {
      for (const { chunkId, vector } of vectors) {
        if (stored.has(chunkId)) set.putVector(chunkId, documentId, vector);
      }
    });
  }

  async deleteDocument(tenant: Tenant, documentId: string): Promise<void> {
    const db = this.#db;
    let generation: number;
    if (db.dialect === 'sqlite') {
      const s = this.#sqliteStatements(db.sqlite);
      generation = db.sqlite.transaction(() => {
        s.deleteDocument.run(tenant.accountId, tenant.userId, documentId);
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
    this.#cache.applied(tenant, generation, (set) => set.removeDocument(documentId));
  }

  async deleteTenant(tenant: Tenant): Promise<void> {
    const db = this.#db;
    if (db.dialect === 'sqlite') {
      const s = this.#sqliteStatements(db.sqlite);
      db.sqlite.transaction(() => {
        s.deleteTenant.run(tenant.accountId, tenant.userId);
        s.deleteGeneration.run(tenant.accountId, tenant.userId);
      })();
    } else {
      await this.#pgTransaction(async (q) => {
        await q('DELETE FROM rag_index_chunks WHERE account_id = $1 AND user_id = $2', [
          tenant.accountId,
          tenant.userId,
        ]);
        // No generation row means no chunks: a cache elsewhere sees 0, unlike what it holds, and reloads.
        await q('DELETE FROM rag_index_tenants WHERE account_id = $1 AND user_id = $2', [
          tenant.accountId,
          tenant.userId,
        ]);
      });
    }
    this.#cache.forget(tenant);
  }

  async search(tenant: Tenant, query: ChunkQuery): Promise<ChunkHit[]> {
    const mode = query.mode ?? 'hybrid';
    const { k, vector } = query;
    if (k <= 0) return [];
    if (mode === 'dense' && !vector) return [];
    const sets = await this.#load(tenant);
    if (mode === 'lexical') return lexical(sets, query.text, k);
    if (mode === 'dense') return vector ? this.#dense(tenant, sets, vector, k) : [];
    const want = Math.max(k, CANDIDATES);
    const dense = vector ? await this.#dense(tenant, sets, vector, want) : [];
    return reciprocalRankFusion([lexical(sets, query.text, want), dense]).slice(0, k);
  }

  async close(): Promise<void> {
    this.#cache.clear();
    await this.statistics.settled();
  }

  /**
   * The tenant's index from memory: the generation read first, then (when it moved) the rows, so a
   * write landing in between makes the next search load again rather than keep stale rows.
   */
  async #load(tenant: Tenant): Promise<TenantSets> {
    const db = this.#db;
    let generation: number;
    let rows: Iterable<IndexRow>;
    if (db.dialect === 'sqlite') {
      const s = this.#sqliteStatements(db.sqlite);
      generation = s.generation(tenant);
      const cached = this.#cache.get(tenant, generation);
      if (cached) return cached;
      rows = s.rows.iterate(tenant.accountId, tenant.userId) as Iterable<IndexRow>;
    } else {
      const found = await db.query<{ generation: string }>(
        'SELECT generation FROM rag_index_tenants WHERE account_id = $1 AND user_id = $2',
        [tenant.accountId, tenant.userId],
      );
      generation = Number(found[0]?.generation ?? 0);
      const cached = this.#cache.get(tenant, generation);
      if (cached) return cached;
      rows = await db.query<IndexRow>(
        `SELECT chunk_id, document_id, terms, embedding FROM rag_index_chunks
         WHERE account_id = $1 AND user_id = $2 ORDER BY seq`,
        [tenant.accountId, tenant.userId],
      );
    }
    const sets = new TenantSets();
    for (const row of rows) addRow(sets, row);
    if (sets.size > 0) this.#cache.put(tenant, generation, sets);
    return sets;
  }

  async #dense(tenant: Tenant, sets: TenantSets, vector: Float32Array, k: number): Promise<ChunkHit[]> {
    const set = sets.vectors;
    if (!set) return [];
    if (set.dimension !== vector.length) {
      throw new Error(`a query vector of ${vector.length} dimensions for an index of ${set.dimension}`);
    }
    // The int8 scan's best, reranked by their exact float32 vectors read back (tenant-filtered) by id.
    const candidates = set.candidates(vector, Math.max(RERANK, 2 * k));
    if (candidates.length === 0) return [];
    const db = this.#db;
    const ids = candidates.map((c) => c.id);
    const rows =
      db.dialect === 'sqlite'
        ? (this.#sqliteStatements(db.sqlite).floats.all(
            tenant.accountId,
            tenant.userId,
            JSON.stringify(ids),
          ) as VectorRow[])
        : await db.query<VectorRow>(
            `SELECT chunk_id, embedding FROM rag_index_chunks
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

interface VectorRow {
  chunk_id: string;
  embedding: Uint8Array;
}

interface IndexRow {
  chunk_id: string;
  document_id: string;
  terms: string;
  embedding: Uint8Array | null;
}

function lexical(sets: TenantSets, text: string, k: number): ChunkHit[] {
  const terms = queryTerms(text);
  if (terms.length === 0) return [];
  return sets.lexical.search(terms, k).map((h) => ({ chunkId: h.id, score: h.score }));
}

function addRow(sets: TenantSets, row: IndexRow): void {
  sets.lexical.upsert(row.chunk_id, row.document_id, row.terms ? row.terms.split(' ') : []);
  const bytes = row.embedding;
  if (!bytes) return;
  // A view when the driver's buffer is 4-byte aligned (upsert copies it), else a copy.
  const vector =
    bytes.byteOffset % 4 === 0
      ? new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)
      : fromBytes(bytes);
  if (!sets.vectors || vector.length === sets.vectors.dimension) sets.putVector(row.chunk_id, row.document_id, vector);
}
