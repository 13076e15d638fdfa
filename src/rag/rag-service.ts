import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import { chunkText, type PageStarts } from './chunker.js';
import type {
  Chunk,
  ChunkIndex,
  ChunkMatch,
  DocumentRecord,
  DocumentStore,
  Embedder,
  IngestionJob,
  Tenant,
} from './types.js';

/** How long an upload waits for its own document to become ready before answering `processing`. */
export const READY_WAIT_MS = 1500;
/** A job's lease: another worker (after a crash, or another replica) takes it over once it ran out. */
const LEASE_MS = 30_000;
/** Chunks embedded per batch; the lease is extended and progress written after each. */
const EMBED_BATCH = 16;
/**
 * Documents without chunks are claimed for chunking the oldest first and, when that one is up to
 * SMALL_BYTES, with up to CLAIM_SMALL - 1 more such small ones (≤ 4 MB held at once): a backlog of small
 * documents is indexed in one write per tenant and claim. A write each was most of a small document's
 * indexing (a PostgreSQL commit ~1.4 ms, an acknowledged Qdrant update ~4 ms): Cranfield's 1,400
 * abstracts (1.4 MB) went from 0.74 to 9.5 MB/s on PostgreSQL.
 */
export const SMALL_BYTES = 16 * 1024;
export const CLAIM_SMALL = 256;
/**
 * Claims chunked and indexed at once. Two: Qdrant applies one write while pvai analyses the next
 * (Cranfield's backlog on Qdrant: 4.3–5.0 MB/s one at a time, 5.8–6.3 two at a time).
 */
export const LEXICAL_LANES = 2;
/** How often an idle worker looks for jobs another process left (crash, replica). */
const POLL_MS = 2000;

export interface NewDocument {
  title?: string | undefined;
  text: string;
  metadata?: Record<string, unknown> | undefined;
  contentType: string;
  sizeBytes: number;
  pages?: PageStarts;
}

export interface RagServiceDeps {
  /** Documents, chunk text, jobs: the source of truth. */
  store: DocumentStore;
  /** What makes chunks findable (SqlChunkIndex, or Qdrant); answers with chunk ids the store resolves. */
  index: ChunkIndex;
  /** Undefined: no embedding model; retrieval is lexical only and documents are ready once chunked. */
  embedder?: Embedder | undefined;
  clock: Clock;
  logger: Logger;
  /** This process alone writes the database (SQLite owner): leases left by a previous run are void. */
  soleWorker: boolean;
  readyWaitMs?: number;
}

/**
 * Documents per (account, user): stored durably first, then chunked and embedded by a background job
 * kept in the database (a `processing` document is the job), which any worker resumes after a crash or
 * restart. The store holds the documents and chunk text; the index makes the chunks findable (hybrid:
 * the lexical and dense rankings fused).
 */
export class RagService {
  readonly #deps: RagServiceDeps;
  readonly #waiters = new Map<string, Array<() => void>>();
  #draining: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  /** The lanes' claims, in turn. */
  #claims: Promise<unknown> = Promise.resolve();
  #closed = false;
  readonly #abort = new AbortController();

  constructor(deps: RagServiceDeps) {
    this.#deps = deps;
  }

  /** Prepares the index (which refuses one built with another embedding model) and starts the worker. */
  async start(): Promise<void> {
    const { store, index, embedder, soleWorker } = this.#deps;
    // The model is loaded now (~2.5 s for MiniLM): a broken model file stops the start with its reason,
    // and the first upload's bounded wait is not spent loading the model.
    await index.prepare(embedder ? { id: embedder.id, dimension: await embedder.dimension() } : undefined);
    if (soleWorker) await store.releaseLeases();
    this.#timer = setInterval(() => this.#kick(), POLL_MS);
    this.#timer.unref();
    this.#kick();
  }

  async create(tenant: Tenant, input: NewDocument): Promise<DocumentRecord> {
    // The one refusal for a document with no text, whether it came as JSON content or as a file (whose
    // extractor says so first, more precisely): refused before anything is stored.
    if (input.text.trim() === '') throw new AppError('EMPTY_DOCUMENT', 'The document has no text');
    const now = this.#deps.clock();
    const doc: DocumentRecord = {
      id: `doc_${randomBytes(12).toString('hex')}`,
      ...tenant,
      title: input.title?.trim() || firstLine(input.text),
      contentType: input.contentType,
      sizeBytes: input.sizeBytes,
      metadata: input.metadata ?? {},
      status: 'processing',
      chunkCount: 0,
      chunksEmbedded: 0,
      failure: null,
      createdAt: now,
    };
    await this.#deps.store.insert(doc, input.text, input.pages ?? []);
    await this.#deps.store.bumpVersion(tenant);
    const done = this.#waitFor(doc.id, this.#deps.readyWaitMs ?? READY_WAIT_MS);
    this.#kick();
    await done;
    return (await this.#deps.store.get(tenant, doc.id)) ?? doc;
  }

  list(tenant: Tenant): Promise<DocumentRecord[]> {
    return this.#deps.store.list(tenant);
  }

  async get(tenant: Tenant, id: string): Promise<DocumentRecord> {
    const doc = await this.#deps.store.get(tenant, id);
    if (!doc) throw new AppError('NOT_FOUND', `No document ${id}`);
    return doc;
  }

  async delete(tenant: Tenant, id: string): Promise<void> {
    if (!(await this.#deps.store.delete(tenant, id))) throw new AppError('NOT_FOUND', `No document ${id}`);
    // After the store: a job still writing this document to the index finds it gone and removes it too.
    await this.#deps.index.deleteDocument(tenant, id);
    await this.#deps.store.bumpVersion(tenant);
  }

  /** Changes whenever what search could return for the user changes (cache key of RAG answers). */
  /** Ingestion jobs not finished yet (documents `processing`), for the metrics. */
  processingCount(): Promise<number> {
    return this.#deps.store.countProcessing();
  }

  async version(tenant: Tenant): Promise<number> {
    return this.#deps.store.version(tenant);
  }

  async search(tenant: Tenant, query: string, k: number, signal?: AbortSignal): Promise<ChunkMatch[]> {
    const { store, index, embedder } = this.#deps;
    const vector = embedder ? (await embedder.embed([query], signal))[0] : undefined;
    const hits = await index.search(tenant, { text: query, vector, k });
    const byId = new Map(
      (
        await store.chunks(
          tenant,
          hits.map((h) => h.chunkId),
        )
      ).map((c) => [c.id, c]),
    );
    // A hit the store does not know (a document deleted a moment ago) is left out.
    return hits.flatMap((h) => {
      const chunk = byId.get(h.chunkId);
      return chunk ? [{ ...chunk, score: h.score }] : [];
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#abort.abort();
    if (this.#timer) clearInterval(this.#timer);
    await this.#draining?.catch(() => undefined);
    await this.#deps.embedder?.close();
    await this.#deps.index.close();
  }

  #waitFor(id: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const list = this.#waiters.get(id) ?? [];
      list.push(done);
      this.#waiters.set(id, list);
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }

  #settled(id: string): void {
    for (const done of this.#waiters.get(id) ?? []) done();
    this.#waiters.delete(id);
  }

  /** Runs jobs until none is left; a kick while running makes it look once more. */
  #kick(): void {
    if (this.#closed) return;
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = (async () => {
      do {
        this.#again = false;
        while (!this.#closed && (await this.#step())) {}
      } while (this.#again && !this.#closed);
    })()
      .catch((err: unknown) => this.#deps.logger.error({ err }, 'document ingestion failed'))
      .finally(() => {
        this.#draining = undefined;
      });
  }

  /**
   * Every waiting document made findable by its words, then one document's vectors. Lexical first: a
   * backlog is searchable at indexing speed (MB/s) instead of at embedding speed (~6 kB/s of text on one
   * thread), and a document uploaded while others embed is found by its words after at most one of
   * them. False: nothing was waiting.
   */
  async #step(): Promise<boolean> {
    const chunked = await this.#chunkWaiting();
    const embedded = await this.#embedOne();
    return chunked || embedded;
  }

  /** Chunks and indexes every document without chunks, LEXICAL_LANES claims at a time. */
  async #chunkWaiting(): Promise<boolean> {
    const { store, embedder } = this.#deps;
    let any = false;
    const lane = async () => {
      while (!this.#closed) {
        const jobs = await this.#claimUnchunked();
        if (jobs.length === 0) return;
        any = true;
        try {
          await this.#chunkAll(jobs);
          if (this.#closed) return;
          const chunked = jobs.filter((j) => j.doc.chunkCount > 0);
          // Without a model a chunked document is done; with one it waits, lease void, for its vectors.
          if (embedder) await store.release(chunked.map((j) => j.doc.id));
          else for (const job of chunked) await this.#embedAndFinish(job);
        } finally {
          await this.#recheckDeleted(jobs);
          for (const job of jobs) if (!embedder || job.doc.chunkCount === 0) this.#settled(job.doc.id);
        }
      }
    };
    await Promise.all(Array.from({ length: LEXICAL_LANES }, lane));
    return any;
  }

  /**
   * A claim of documents to chunk, one claim at a time in this process: two lanes claiming at once would
   * split a backlog between them in turn (one lane's oldest document, then the other's batch).
   */
  #claimUnchunked(): Promise<IngestionJob[]> {
    const claimed = this.#claims.then(() =>
      this.#deps.store.claimUnchunked(this.#deps.clock(), LEASE_MS, SMALL_BYTES, CLAIM_SMALL),
    );
    this.#claims = claimed.catch(() => undefined);
    return claimed;
  }

  /** One document's vectors, then `ready` (chunking it first if it came after the lexical pass). */
  async #embedOne(): Promise<boolean> {
    const job = await this.#deps.store.claim(this.#deps.clock(), LEASE_MS);
    if (!job) return false;
    try {
      if (job.doc.chunkCount === 0) await this.#chunkAll([job]);
      if (this.#closed) return false;
      if (job.doc.chunkCount > 0) await this.#embedAndFinish(job);
    } finally {
      await this.#recheckDeleted([job]);
      this.#settled(job.doc.id);
    }
    return true;
  }

  /**
   * Chunks the jobs and puts them into the index, then the store, one write each per tenant. The index
   * first: chunk_count > 0 (stored in the store's one transaction) then means the index has the chunks
   * too, so a job resumed after a crash has only the vectors left to do. A crash in between leaves
   * chunk_count 0 and the resumed job chunks again (the index replaces them). A job chunked gets its
   * chunk count; one that failed is finished as failed.
   */
  async #chunkAll(jobs: readonly IngestionJob[]): Promise<void> {
    const { store, index } = this.#deps;
    const byTenant = new Map<string, Array<{ doc: DocumentRecord; chunks: Chunk[]; fresh: boolean }>>();
    for (const { doc, text, pages, attempts } of jobs) {
      const chunks = chunkText(doc.id, text, pages);
      if (chunks.length === 0) {
        await store.finish(doc.id, { status: 'failed', code: 'EMPTY_DOCUMENT', message: 'The document has no text' });
        continue;
      }
      const key = JSON.stringify([doc.accountId, doc.userId]);
      // A first claim follows no write of this document's chunks (each claim counts): nothing to replace.
      byTenant.set(key, [...(byTenant.get(key) ?? []), { doc, chunks, fresh: attempts === 1 }]);
    }
    for (const group of byTenant.values()) {
      const { accountId, userId } = (group[0] as { doc: DocumentRecord }).doc;
      const tenant = { accountId, userId };
      try {
        await index.putDocuments(
          tenant,
          group.map((g) => ({ documentId: g.doc.id, chunks: g.chunks, fresh: g.fresh })),
        );
        await store.putChunks(group);
        await store.bumpVersion(tenant);
        for (const g of group) g.doc.chunkCount = g.chunks.length;
      } catch (err) {
        if (this.#closed) return;
        for (const g of group) await this.#fail(g.doc, err);
      }
    }
  }

  /** Embeds a chunked job's chunks not embedded yet, then marks it ready. */
  async #embedAndFinish(job: IngestionJob): Promise<void> {
    const { store, index, embedder, clock } = this.#deps;
    const { doc } = job;
    const tenant = { accountId: doc.accountId, userId: doc.userId };
    try {
      if (embedder) {
        for (;;) {
          const batch = await store.unembedded(doc.id, EMBED_BATCH);
          if (batch.length === 0 || this.#closed) break;
          const vectors = await embedder.embed(
            batch.map((c) => c.text),
            this.#abort.signal,
          );
          // A chunk with nothing the model reads (a run of control characters, say) has no vector: it stays
          // findable by its words, and counts as embedded so the document still becomes ready.
          const embedded = batch.flatMap((c, i) => {
            const vector = vectors[i];
            return vector ? [{ chunkId: c.id, vector }] : [];
          });
          if (embedded.length > 0) await index.putVectors(tenant, doc.id, embedded);
          await store.markEmbedded(
            doc.id,
            batch.map((c) => c.id),
          );
          await store.extendLease(doc.id, clock() + LEASE_MS);
        }
        if (this.#closed) return;
      }
      await store.finish(doc.id, { status: 'ready' });
      await store.bumpVersion(tenant);
    } catch (err) {
      if (!this.#closed) await this.#fail(doc, err);
    }
  }

  async #fail(doc: DocumentRecord, err: unknown): Promise<void> {
    this.#deps.logger.error({ err, document_id: doc.id }, 'indexing a document failed');
    await this.#deps.store.finish(doc.id, {
      status: 'failed',
      code: 'INDEXING_FAILED',
      message: `Indexing failed: ${(err as Error).message}`,
    });
  }

  /**
   * Jobs' documents deleted while their job wrote to the index (the delete may have cleaned the index
   * before): cleaned again. One read for a whole claim (up to 256 documents; one read each was a round
   * trip each). When the read fails, the documents are taken to exist, as the job found them.
   */
  async #recheckDeleted(jobs: readonly IngestionJob[]): Promise<void> {
    if (this.#closed || jobs.length === 0) return;
    const ids = jobs.map((j) => j.doc.id);
    const present = await this.#deps.store.existing(ids).catch(() => new Set(ids));
    for (const { doc } of jobs) {
      if (present.has(doc.id)) continue;
      const tenant = { accountId: doc.accountId, userId: doc.userId };
      await this.#deps.index.deleteDocument(tenant, doc.id).catch((err: unknown) => {
        this.#deps.logger.error({ err, document_id: doc.id }, 'removing a deleted document from the index failed');
      });
    }
  }
}

function firstLine(text: string): string {
  const line = text.trim().split('\n', 1)[0]?.trim() ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}...` : line || 'Untitled';
}
