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
import { QdrantClient, type Schemas } from '@qdrant/js-client-rest';
import { TRACING } from '../../tracing/index.js';
import { fusionCandidates, RRF_K } from '../fusion.js';
import type { Chunk, ChunkHit, ChunkIndex, ChunkQuery, DocumentChunks, Tenant } from '../types.js';
import { chunkSparse, querySparse } from './qdrant-sparse.js';
import {
  bm25,
  type CollectionState,
  carryingTrace,
  DENSE,
  describeQdrantError,
  embeddingMismatch,
  LEXICAL,
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
  url: string;
  apiKey?: string | undefined;
  /** Default `pvai_chunks`. */
  collection?: string | undefined;
  /** Per request, in milliseconds (default 30 s). */
  timeoutMs?: number | undefined;
}

type Payload = { account_id: string; user_id: string; document_id: string; chunk_id: string };

export class QdrantChunkIndex implements ChunkIndex {
  readonly name = 'qdrant';
  readonly collection: string;
  readonly #client: QdrantClient;
  readonly #url: string;
  /** Whether the collection has the dense vector (known after prepare). */
  #dense = false;
  /** The collection's layout (known after prepare): 1 has Qdrant tokenise text for BM25, 2 gets vectors. */
  #schema = SCHEMA;

  constructor(options: QdrantChunkIndexOptions) {
    this.collection = options.collection ?? DEFAULT_QDRANT_COLLECTION;
    this.#url = options.url;
    // The client takes a URL without a port as port 6333 and drops its path; here a URL means what it
    // says (as for pvai doctor): no port is the scheme's, a path is a prefix (Qdrant behind a proxy).
    const url = new URL(options.url);
    const prefix = url.pathname.replace(/\/+$/, '');
    const client = new QdrantClient({
      url: url.origin,
      port: Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      ...(prefix ? { prefix } : {}),
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
      // Plain HTTP (a Qdrant beside the service): a connection per request. Qdrant's HTTP server leaves
      // Nagle's algorithm on and sends a response over ~1 KB in two segments; on a kept-alive
      // connection the second waits for the client's delayed ACK, 40 ms. Measured at 1k points: a
      // query answering 100 ids took 46.8 ms p50 kept alive, 3.4 ms on a fresh connection (whose first
      // segments Linux ACKs at once). Over HTTPS a handshake costs more than it saves: kept alive.
      ...(url.protocol === 'http:' ? { headers: { connection: 'close' } } : {}),
      timeout: options.timeoutMs ?? 30_000,
      checkCompatibility: false,
    });
    this.#client = TRACING.on ? carryingTrace(client) : client;
  }

  async prepare(embedding?: { id: string; dimension: number }): Promise<void> {
    await this.#call('prepare', async () => {
      let state = await this.#state();
      if (!state) {
        await this.#client
          .createCollection(this.collection, {
            vectors: embedding ? { [DENSE]: { size: embedding.dimension, distance: 'Cosine' } } : {},
            sparse_vectors: { [LEXICAL]: { modifier: 'idf' } },
            // Schema 2: this layout with BM25 vectors as qdrant-sparse.ts makes them (a change to either is
            // a new schema). Schema 1, the same layout with Qdrant's server-side `qdrant/bm25`, is still
            // served: its collections keep working, with text sent as before.
            metadata: { pvai: { schema: SCHEMA, embedding: embedding ?? null } },
          })
          .catch(async (err: unknown) => {
            // Another replica created it first (409): what it created is checked below like any other.
            if ((err as { status?: number }).status !== 409) throw err;
          });
        state = await this.#state();
        if (!state) throw new Error('the collection was created but cannot be read back');
      }
      if (!state.pvai) {
        throw new Error(
          `collection "${this.collection}" exists but was not created by pvai; set QDRANT_COLLECTION to another name`,
        );
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
            await this.#client.createVectorName(
              this.collection,
              DENSE,
              { dense: { size: embedding.dimension, distance: 'Cosine' } } as never,
              { wait: true },
            );
          }
          await this.#client.updateCollection(this.collection, {
            metadata: { pvai: { schema: state.schema, embedding } },
          });
          const after = await this.#state();
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
        await this.#client.createPayloadIndex(this.collection, {
          wait: true,
          field_name: field,
          field_schema: isTenant ? { type: 'keyword', is_tenant: true } : 'keyword',
        });
      }
      const prepared = await this.#state();
      this.#dense = prepared?.denseSize !== undefined;
      this.#schema = prepared?.schema ?? SCHEMA;
    });
  }

  putChunks(tenant: Tenant, documentId: string, chunks: readonly Chunk[]): Promise<void> {
    return this.putDocuments(tenant, [{ documentId, chunks }]);
  }

  async putDocuments(tenant: Tenant, documents: readonly DocumentChunks[]): Promise<void> {
    if (documents.length === 0) return;
    await this.#call('putDocuments', async () => {
      // Ids of the chunks of documents that may have earlier ones: those are removed after the upserts.
      const kept: string[] = [];
      let points: Schemas['PointStruct'][] = [];
      // Up to two upserts in flight: Qdrant parses and logs one while it applies the other, and the
      // client builds the next meanwhile. Measured at 2,789 Cranfield chunks in batches of 256: 187 ms
      // one at a time, 159 ms two at a time (each still acknowledged, so a failure is not lost).
      const inFlight: Promise<unknown>[] = [];
      const send = async (batch: Schemas['PointStruct'][]) => {
        if (inFlight.length === 2) await inFlight.shift();
        inFlight.push(this.#client.upsert(this.collection, { wait: true, points: batch }));
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
      await this.#client.batchUpdate(this.collection, {
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
    await this.#call('putVectors', async () => {
      for (let i = 0; i < vectors.length; i += BATCH) {
        await this.#client.updateVectors(this.collection, {
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
    await this.#call('deleteDocument', () =>
      this.#client.delete(this.collection, { wait: true, filter: tenantFilter(tenant, documentId) }),
    );
  }

  async deleteTenant(tenant: Tenant): Promise<void> {
    await this.#call('deleteTenant', () =>
      this.#client.delete(this.collection, { wait: true, filter: tenantFilter(tenant) }),
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
    const result = await this.#call('search', () => {
      if (lexical && dense) {
        const limit = fusionCandidates(k);
        return this.#client.query(this.collection, {
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
        ? this.#client.query(this.collection, { ...common, query: lexical, using: LEXICAL })
        : this.#client.query(this.collection, { ...common, query: dense, using: DENSE });
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

  async #state(): Promise<CollectionState | undefined> {
    return readState(this.#client, this.collection);
  }

  /** Runs one Qdrant operation; failures say what failed, where, and Qdrant's own reason. */
  async #call<T>(operation: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw describeQdrantError(err, { url: this.#url, collection: this.collection, operation });
    }
  }
}
