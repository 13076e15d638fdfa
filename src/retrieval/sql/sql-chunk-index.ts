import type { Db } from '../../storage/index.js';
import { analyze, queryTerms } from '../../text/index.js';
import { fusionCandidates, reciprocalRankFusion } from '../fusion.js';
import type { Chunk, ChunkHit, ChunkIndex, ChunkQuery, DocumentChunks, Tenant } from '../types.js';
import { type IndexRow, type IndexRows, indexRowsFor } from './index-rows.js';
import { PlannerStatistics } from './planner-statistics.js';
import { TenantCache } from './tenant-cache.js';
import { TenantSets } from './tenant-sets.js';
import { rerank } from './vector-set.js';

/**
 * Chunks kept in memory across tenants (least recently searched go first): ~0.4 KB of int8 vector and
 * ~0.5 KB of postings and ids each (measured at 100k Cranfield chunks), so ~270 MB at most.
 */
const CACHED_CHUNKS = 300_000;
/** Candidates of the int8 scan reranked exactly (at least; 2k when k is larger). */
const RERANK = 100;

function fromBytes(bytes: Uint8Array): Float32Array {
  // Copied: the driver's buffer need not be 4-byte aligned.
  return new Float32Array(new Uint8Array(bytes).buffer);
}

/** The refusal of an index built with another embedding model, saying what to do. */
function modelMismatch(
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
  /** The rows in the database, by dialect (index-rows.ts): this class has no dialect of its own. */
  readonly #rows: IndexRows;
  readonly #cache: TenantCache<TenantSets>;
  /** PostgreSQL only: ANALYZE after bulk writes (planner-statistics.ts says why). */
  readonly statistics: PlannerStatistics;

  constructor(
    db: Db,
    options: { cachedChunks?: number; onError?: (err: unknown) => void; statisticsCheckEvery?: number } = {},
  ) {
    this.#db = db;
    this.name = db.dialect;
    this.#rows = indexRowsFor(db);
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
    const analysed = documents.map((d) => ({
      documentId: d.documentId,
      chunks: d.chunks.map((c) => ({ id: c.id, terms: analyze(c.text) })),
    }));
    // One transaction: the documents' old entries go and the new ones come together.
    const generation = await this.#rows.put(tenant, analysed);
    this.statistics.wrote(analysed.reduce((n, d) => n + d.chunks.length, 0));
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
    // Only chunks that were put (and are still there) take a vector, in the database and in memory alike.
    const { stored, generation } = await this.#rows.putVectors(tenant, documentId, vectors);
    this.#cache.applied(tenant, generation, (set) => {
      for (const { chunkId, vector } of vectors) {
        if (stored.has(chunkId)) set.putVector(chunkId, documentId, vector);
      }
    });
  }

  async deleteDocument(tenant: Tenant, documentId: string): Promise<void> {
    const generation = await this.#rows.deleteDocument(tenant, documentId);
    this.#cache.applied(tenant, generation, (set) => set.removeDocument(documentId));
  }

  async deleteTenant(tenant: Tenant): Promise<void> {
    // No generation row means no chunks: a cache elsewhere sees 0, unlike what it holds, and reloads.
    await this.#rows.deleteTenant(tenant);
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
    const want = fusionCandidates(k);
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
    const generation = await this.#rows.generation(tenant);
    const cached = this.#cache.get(tenant, generation);
    if (cached) return cached;
    const sets = new TenantSets();
    await this.#rows.eachRow(tenant, (row) => addRow(sets, row));
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
    const rows = await this.#rows.vectors(
      tenant,
      candidates.map((c) => c.id),
    );
    const floats = new Map(rows.map((r) => [r.chunk_id, fromBytes(r.embedding)]));
    return rerank(vector, candidates, (id) => floats.get(id), k).map((h) => ({ chunkId: h.id, score: h.score }));
  }
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
