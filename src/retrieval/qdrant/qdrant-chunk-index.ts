/**
 * The Qdrant adapter of the retrieval port (`QDRANT_URL`).
 *
 * What lives where: documents, their extracted text and the chunk text stay in SQL (the document
 * store, PostgreSQL or SQLite through TypeORM), which is the source of truth for everything the API
 * returns and what a re-index is rebuilt from. Qdrant holds only what search needs: per chunk one
 * point with a named dense vector (`dense`, cosine, the embedding model's dimension), a sparse BM25
 * vector (`bm25`, IDF modifier) made from the chunk text by pvai's own analysis (qdrant-sparse.ts, the
 * SQL index's; collections of schema 1 have Qdrant's `qdrant/bm25` make it), and the tenant payload.
 * Keeping the text out of the payload avoids a second copy that could drift from SQL and keeps end users' text in one
 * place to delete, back up and secure; a search costs one extra indexed SQL read by chunk id, which
 * the SQL adapter pays too.
 *
 * Isolation: `account_id` is a keyword index with `is_tenant: true` (Qdrant co-locates a tenant's
 * points), `user_id` and `document_id` are keyword indexes, every query, update and delete carries a
 * `must` filter on account and user, and point ids are derived from (account, user, chunk id), so no
 * write of one tenant can address another's point even with the same chunk id.
 *
 * The embedding model's id and dimension are kept in the collection's metadata; an index built with
 * another model is refused instead of mixing vector spaces.
 */
import type { QdrantClient, Schemas } from '@qdrant/js-client-rest';
import { fusionCandidates, RRF_K } from '../fusion.js';
import type { Chunk, ChunkHit, ChunkIndex, ChunkQuery, DocumentChunks, Tenant } from '../types.js';
import { QdrantNodes, qdrantUrls } from './qdrant-nodes.js';
import { chunkSparse, querySparse } from './qdrant-sparse.js';
import {
  bm25,
  type ClusterLayout,
  DENSE,
  embeddingMismatch,
  LEXICAL,
  layoutDifferences,
  pointId,
  readState,
  tenantFilter,
} from './qdrant-support.js';

const DEFAULT_QDRANT_COLLECTION = 'pvai_chunks';
/** Points per upsert (~60 kB of JSON with sparse vectors; a schema-1 server tokenises each text). */
const BATCH = 256;
/** The collection layout new collections get: see `prepare`. */
const SCHEMA = 2;

export interface QdrantChunkIndexOptions {
  /** One node's URL, or a cluster's nodes' URLs comma-separated (qdrant-nodes.ts: failover between them). */
  url: string;
  apiKey?: string | undefined;
  /** Default `pvai_chunks`. */
  collection?: string | undefined;
  /** Per request, in milliseconds (default 30 s). */
  timeoutMs?: number | undefined;
  /** Shards, replicas and write consistency of a collection created here (default 1/1/1, one node's). */
  cluster?: ClusterLayout | undefined;
  /** Told once when an existing collection's layout differs from `cluster` (it is used as it is). */
  warn?: ((message: string) => void) | undefined;
}

type Payload = { account_id: string; user_id: string; document_id: string; chunk_id: string };

/**
 * Dense vectors of a new collection: float32 on disk, searched through their int8 quantisation kept in RAM and
 * rescored with the originals. One account at a million chunks (bench:rag-scale): Qdrant's RSS 2,330 MB with
 * float32 in RAM, 1,255 MB so, hybrid p95 13.2 → 9.2 ms; Cranfield's nDCG@10 the same (hybrid 0.392 / 0.393,
 * dense 0.362 either way). A collection created before keeps its layout (Qdrant's PATCH can change it).
 */
const INT8_IN_RAM = { scalar: { type: 'int8', quantile: 0.99, always_ram: true } } as const;
function denseParams(dimension: number) {
  return { size: dimension, distance: 'Cosine', on_disk: true } as const;
}

export class QdrantChunkIndex implements ChunkIndex {
  readonly name = 'qdrant';
  readonly collection: string;
  readonly #nodes: QdrantNodes;
  readonly #cluster: ClusterLayout;
  readonly #warn: (message: string) => void;
  /** Whether a layout difference was told already (prepare runs for documents and for memories). */
  #warned = false;
  /** Whether the collection has the dense vector (known after prepare). */
  #dense = false;
  /** The collection's layout (known after prepare): 1 has Qdrant tokenise text for BM25, 2 gets vectors. */
  #schema = SCHEMA;

  constructor(options: QdrantChunkIndexOptions) {
    this.collection = options.collection ?? DEFAULT_QDRANT_COLLECTION;
    this.#nodes = new QdrantNodes(qdrantUrls(options.url), options);
    this.#cluster = options.cluster ?? { shardNumber: 1, replicationFactor: 1, writeConsistencyFactor: 1 };
    this.#warn = options.warn ?? (() => undefined);
  }

  async prepare(embedding?: { id: string; dimension: number }): Promise<void> {
    await this.#call('prepare', async (client) => {
      let state = await readState(client, this.collection);
      if (!state) {
        await client
          .createCollection(this.collection, {
            vectors: embedding ? { [DENSE]: denseParams(embedding.dimension) } : {},
            sparse_vectors: { [LEXICAL]: { modifier: 'idf' } },
            quantization_config: INT8_IN_RAM,
            // On a cluster: spread over shard_number shards, each on replication_factor nodes (docs/configuration.md).
            shard_number: this.#cluster.shardNumber,
            replication_factor: this.#cluster.replicationFactor,
            write_consistency_factor: this.#cluster.writeConsistencyFactor,
            // Schema 2: this layout with BM25 vectors as qdrant-sparse.ts makes them (a change to either is
            // a new schema). Schema 1, the same layout with Qdrant's server-side `qdrant/bm25`, is still
            // served: its collections keep working, with text sent as before.
            metadata: { pvai: { schema: SCHEMA, embedding: embedding ?? null } },
          })
          .catch(async (err: unknown) => {
            // Another replica created it first (409): what it created is checked below like any other.
            if ((err as { status?: number }).status !== 409) throw err;
          });
        state = await readState(client, this.collection);
        if (!state) throw new Error('the collection was created but cannot be read back');
      }
      if (!state.pvai) {
        throw new Error(
          `collection "${this.collection}" exists but was not created by pvai; set QDRANT_COLLECTION to another name`,
        );
      }
      const different = layoutDifferences(this.collection, state.cluster, this.#cluster);
      if (different && !this.#warned) {
        this.#warned = true;
        this.#warn(different);
      }
      if (embedding) {
        const recorded = state.embedding;
        if (recorded) {
          const mismatch = embeddingMismatch(this.collection, recorded, embedding);
          if (mismatch) throw new Error(mismatch);
          if (state.denseSize !== undefined && state.denseSize !== embedding.dimension) {
            throw new Error(
              `collection "${this.collection}" has ${state.denseSize}-dimension vectors but records ${recorded.dimension}`,
            );
          }
        } else {
          // Built without an embedding model so far (lexical only): add the dense vector and record the model.
          if (state.denseSize === undefined) {
            await client.createVectorName(
              this.collection,
              DENSE,
              { dense: { size: embedding.dimension, distance: 'Cosine' } },
              { wait: true },
            );
            // Created in RAM (Qdrant infers the storage of a vector added later): moved to disk as a new one's.
            await client.updateCollection(this.collection, { vectors: { [DENSE]: { on_disk: true } } });
          }
          await client.updateCollection(this.collection, {
            metadata: { pvai: { schema: state.schema, embedding } },
          });
          const after = await readState(client, this.collection);
          const mismatch = after?.embedding && embeddingMismatch(this.collection, after.embedding, embedding);
          if (mismatch) throw new Error(mismatch); // a replica with another model raced us
        }
      }
      for (const [field, isTenant] of [
        ['account_id', true],
        ['user_id', false],
        ['document_id', false],
      ] as const) {
        // Idempotent: creating an index that exists with the same schema succeeds.
        await client.createPayloadIndex(this.collection, {
          wait: true,
          field_name: field,
          field_schema: isTenant ? { type: 'keyword', is_tenant: true } : 'keyword',
        });
      }
      const prepared = await readState(client, this.collection);
      this.#dense = prepared?.denseSize !== undefined;
      this.#schema = prepared?.schema ?? SCHEMA;
    });
  }

  putChunks(tenant: Tenant, documentId: string, chunks: readonly Chunk[]): Promise<void> {
    return this.putDocuments(tenant, [{ documentId, chunks }]);
  }

  async putDocuments(tenant: Tenant, documents: readonly DocumentChunks[]): Promise<void> {
    if (documents.length === 0) return;
    await this.#call('putDocuments', async (client) => {
      // Ids of the chunks of documents that may have earlier ones: those are removed after the upserts.
      const kept: string[] = [];
      let points: Schemas['PointStruct'][] = [];
      // Up to two upserts in flight: Qdrant parses and logs one while it applies the other, and the
      // client builds the next meanwhile. Measured at 2,789 Cranfield chunks in batches of 256: 187 ms
      // one at a time, 159 ms two at a time (each still acknowledged, so a failure is not lost).
      const inFlight: Promise<unknown>[] = [];
      const send = async (batch: Schemas['PointStruct'][]) => {
        if (inFlight.length === 2) await inFlight.shift();
        const upsert = client.upsert(this.collection, { wait: true, points: batch });
        // Awaited below; meanwhile a failure while the other one is awaited must not be an unhandled rejection.
        upsert.catch(() => undefined);
        inFlight.push(upsert);
      };
      for (const { documentId, chunks, fresh } of documents) {
        for (const chunk of chunks) {
          const id = pointId(tenant, chunk.id);
          if (!fresh) kept.push(id);
          const payload: Payload = {
            account_id: tenant.accountId,
            user_id: tenant.userId,
            document_id: documentId,
            chunk_id: chunk.id,
          };
          // An upsert replaces the whole point: a re-put chunk loses its old vector until putVectors.
          points.push({ id, vector: { [LEXICAL]: this.#lexical(chunk.text) }, payload });
          if (points.length === BATCH) {
            await send(points);
            points = [];
          }
        }
      }
      const replaced = documents.filter((d) => !d.fresh).map((d) => d.documentId);
      if (replaced.length === 0) {
        // Nothing earlier to look for, so no delete. Measured on Cranfield's 2,789 chunks in writes of
        // ~510 sent straight to Qdrant: 157–169 ms of upserts alone, 216–316 ms with each write's delete;
        // through this adapter (analysis included) 9 % less time and 10 % less of Qdrant's CPU.
        if (points.length > 0) await send(points);
        await Promise.all(inFlight);
        return;
      }
      await Promise.all(inFlight);
      // The last points and, after them in the same request, the documents' earlier chunks that are not
      // among these: no moment without the documents, and one request for a backlog of small ones.
      const tenantMust = tenantFilter(tenant).must;
      await client.batchUpdate(this.collection, {
        wait: true,
        operations: [
          ...(points.length > 0 ? [{ upsert: { points } }] : []),
          {
            delete: {
              filter: {
                must: [...tenantMust, { key: 'document_id', match: { any: replaced } }],
                must_not: [{ has_id: kept }],
              },
            },
          },
        ],
      });
    });
  }

  async putVectors(
    tenant: Tenant,
    documentId: string,
    vectors: ReadonlyArray<{ chunkId: string; vector: Float32Array }>,
  ): Promise<void> {
    if (vectors.length === 0) return;
    if (!this.#dense) {
      throw new Error(`Qdrant collection "${this.collection}" was prepared without an embedding model`);
    }
    await this.#call('putVectors', async (client) => {
      for (let i = 0; i < vectors.length; i += BATCH) {
        await client.updateVectors(this.collection, {
          wait: true,
          points: vectors
            .slice(i, i + BATCH)
            .map((v) => ({ id: pointId(tenant, v.chunkId), vector: { [DENSE]: Array.from(v.vector) } })),
          update_filter: tenantFilter(tenant, documentId),
        });
      }
    });
  }

  async deleteDocument(tenant: Tenant, documentId: string): Promise<void> {
    await this.#call('deleteDocument', (client) =>
      client.delete(this.collection, { wait: true, filter: tenantFilter(tenant, documentId) }),
    );
  }

  async deleteTenant(tenant: Tenant): Promise<void> {
    await this.#call('deleteTenant', (client) =>
      client.delete(this.collection, { wait: true, filter: tenantFilter(tenant) }),
    );
  }

  async search(tenant: Tenant, query: ChunkQuery): Promise<ChunkHit[]> {
    const mode = query.mode ?? 'hybrid';
    const k = Math.max(0, Math.floor(query.k));
    const lexical = mode !== 'dense' ? this.#lexicalQuery(query.text) : undefined;
    const dense = mode !== 'lexical' && this.#dense && query.vector ? Array.from(query.vector) : undefined;
    if (k === 0 || (!lexical && !dense)) return [];
    const filter = tenantFilter(tenant);
    const common = { filter, limit: k, with_payload: ['chunk_id'], with_vector: false };
    const result = await this.#call('search', (client) => {
      if (lexical && dense) {
        const limit = fusionCandidates(k);
        return client.query(this.collection, {
          ...common,
          prefetch: [
            { query: lexical, using: LEXICAL, filter, limit },
            { query: dense, using: DENSE, filter, limit },
          ],
          // retrieval's K, not Qdrant's own default (2).
          query: { rrf: { k: RRF_K } } as never,
        });
      }
      return lexical
        ? client.query(this.collection, { ...common, query: lexical, using: LEXICAL })
        : client.query(this.collection, { ...common, query: dense, using: DENSE });
    });
    return result.points.flatMap((p) => {
      const chunkId = (p.payload as Partial<Payload> | null | undefined)?.chunk_id;
      return typeof chunkId === 'string' ? [{ chunkId, score: p.score }] : [];
    });
  }

  async close(): Promise<void> {
    // The REST client keeps no connection of its own to close.
  }

  /** A chunk's sparse vector as the collection's schema stores it. */
  #lexical(text: string) {
    return this.#schema === 1 ? bm25(text) : chunkSparse(text);
  }

  /** A query's sparse vector, or none when it has nothing to match (no word; on schema 2 only stop words). */
  #lexicalQuery(text: string) {
    if (this.#schema !== 1) return querySparse(text);
    // Qdrant's BM25 drops punctuation itself; a query with no letter or digit has nothing to match.
    const clean = text.replaceAll('\u0000', ' ');
    return /[\p{L}\p{N}]/u.test(clean) ? bm25(clean) : undefined;
  }

  /**
   * Runs one Qdrant operation on the node in use, on the next when it does not answer (qdrant-nodes.ts); failures
   * say what failed, where, and Qdrant's own reason.
   */
  #call<T>(operation: string, run: (client: QdrantClient) => Promise<T>): Promise<T> {
    return this.#nodes.run(operation, this.collection, run);
  }
}
