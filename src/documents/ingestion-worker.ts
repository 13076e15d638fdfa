import type { Logger } from 'pino';
import type { Clock } from '../clock/index.js';
import type { Chunk, ChunkIndex, Embedder } from '../retrieval/index.js';
import { JobPump } from '../storage/index.js';
import { TRACING, tracedJob } from '../tracing/index.js';
import { chunkText } from './chunker.js';
import type { DocumentRecord, DocumentStore, IngestionJob } from './types.js';

/** How the worker claims and writes; the defaults are the service's, and benches read them to write as it does. */
export interface IngestionOptions {
  /** A job's lease: another worker (after a crash, or another replica) takes it over once it ran out. */
  leaseMs: number;
  /** Chunks embedded per batch; the lease is extended and progress written after each. */
  embedBatch: number;
  /**
   * Documents without chunks are claimed for chunking the oldest first and, when that one is up to
   * `smallBytes`, with up to `claimSmall - 1` more such small ones (≤ 4 MB held at once): a backlog of small
   * documents is indexed in one write per tenant and claim. A write each was most of a small document's
   * indexing (a PostgreSQL commit ~1.4 ms, an acknowledged Qdrant update ~4 ms): Cranfield's 1,400
   * abstracts (1.4 MB) went from 0.74 to 9.5 MB/s on PostgreSQL.
   */
  smallBytes: number;
  claimSmall: number;
  /**
   * Claims chunked and indexed at once. Two: Qdrant applies one write while pvai analyses the next
   * (Cranfield's backlog on Qdrant: 4.3–5.0 MB/s one at a time, 5.8–6.3 two at a time).
   */
  lanes: number;
  /** How often an idle worker looks for jobs another process left (crash, replica). */
  pollMs: number;
}

export const DEFAULT_INGESTION: Readonly<IngestionOptions> = Object.freeze({
  leaseMs: 30_000,
  embedBatch: 16,
  smallBytes: 16 * 1024,
  claimSmall: 256,
  lanes: 2,
  pollMs: 2000,
});

/** Where documents live and are indexed, and what runs their jobs: DocumentService hands its own to the worker. */
export interface IngestionPorts {
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
}

export interface IngestionWorkerDeps extends IngestionPorts {
  /** Told when a document's job is over (ready, failed, or chunked and waiting for vectors without a model). */
  settled(documentId: string): void;
  options?: Partial<IngestionOptions> | undefined;
}

/**
 * The background job of every `processing` document, kept in the database (the document is the job): claims
 * under leases, chunks and indexes (lexical first, for a whole backlog), then embeds. Any worker, in any replica,
 * resumes a job whose lease ran out after a crash or restart.
 */
export class IngestionWorker {
  readonly #deps: IngestionWorkerDeps;
  readonly #options: IngestionOptions;
  /** The lanes' claims, in turn. */
  #claims: Promise<unknown> = Promise.resolve();
  readonly #pump: JobPump;

  constructor(deps: IngestionWorkerDeps) {
    this.#deps = deps;
    this.#options = { ...DEFAULT_INGESTION, ...deps.options };
    this.#pump = new JobPump(
      async () => {
        while (!this.#pump.closed && (await this.#step())) {}
      },
      { pollMs: this.#options.pollMs, onError: (err) => deps.logger.error({ err }, 'document ingestion failed') },
    );
  }

  /** Voids a previous run's leases when this process is the sole writer, then polls and runs what is waiting. */
  async start(): Promise<void> {
    if (this.#deps.soleWorker) await this.#deps.store.releaseLeases();
    this.#pump.start();
  }

  /** Stops claiming, aborts an embedding under way and waits for the running step to end. */
  close(): Promise<void> {
    return this.#pump.close();
  }

  /** Runs jobs until none is left; a kick while running makes it look once more. */
  kick(): void {
    this.#pump.kick();
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

  /** Chunks and indexes every document without chunks, `lanes` claims at a time. */
  async #chunkWaiting(): Promise<boolean> {
    const { store, embedder } = this.#deps;
    let any = false;
    const lane = async () => {
      while (!this.#pump.closed) {
        const jobs = await this.#claimUnchunked();
        if (jobs.length === 0) return;
        any = true;
        try {
          await this.#chunkAll(jobs);
          if (this.#pump.closed) return;
          const chunked = jobs.filter((j) => j.doc.chunkCount > 0);
          // Without a model a chunked document is done; with one it waits, lease void, for its vectors.
          if (embedder) await store.release(chunked.map((j) => j.doc.id));
          else for (const job of chunked) await this.#embedAndFinish(job);
        } finally {
          await this.#recheckDeleted(jobs);
          for (const job of jobs) if (!embedder || job.doc.chunkCount === 0) this.#deps.settled(job.doc.id);
        }
      }
    };
    await Promise.all(Array.from({ length: this.#options.lanes }, lane));
    return any;
  }

  /**
   * A claim of documents to chunk, one claim at a time in this process: two lanes claiming at once would
   * split a backlog between them in turn (one lane's oldest document, then the other's batch).
   */
  #claimUnchunked(): Promise<IngestionJob[]> {
    const claimed = this.#claims.then(() =>
      this.#deps.store.claimUnchunked(
        this.#deps.clock(),
        this.#options.leaseMs,
        this.#options.smallBytes,
        this.#options.claimSmall,
      ),
    );
    this.#claims = claimed.catch(() => undefined);
    return claimed;
  }

  /** One document's vectors, then `ready` (chunking it first if it came after the lexical pass). */
  async #embedOne(): Promise<boolean> {
    const job = await this.#deps.store.claim(this.#deps.clock(), this.#options.leaseMs);
    if (!job) return false;
    try {
      if (job.doc.chunkCount === 0) await this.#chunkAll([job]);
      if (this.#pump.closed) return false;
      if (job.doc.chunkCount > 0) await this.#embedAndFinish(job);
    } finally {
      await this.#recheckDeleted([job]);
      this.#deps.settled(job.doc.id);
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
  #chunkAll(jobs: readonly IngestionJob[]): Promise<void> {
    if (!TRACING.on) return this.#chunkAllNow(jobs);
    // A trace of its own per claim: its index write (and Qdrant's call) is the child span.
    const attributes = { 'pvai.job': 'ingestion', 'pvai.documents': jobs.length };
    return tracedJob('ingestion chunk', attributes, () => this.#chunkAllNow(jobs));
  }

  async #chunkAllNow(jobs: readonly IngestionJob[]): Promise<void> {
    const { store, index } = this.#deps;
    const byTenant = new Map<string, Array<{ doc: DocumentRecord; chunks: Chunk[]; fresh: boolean }>>();
    for (const { doc, text, pages, attempts } of jobs) {
      const chunks = chunkText(doc.id, text, pages, doc.chunking ?? undefined);
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
        await store.refreshVersion(tenant);
        for (const g of group) g.doc.chunkCount = g.chunks.length;
      } catch (err) {
        if (this.#pump.closed) return;
        for (const g of group) await this.#fail(g.doc, err);
      }
    }
  }

  /** Embeds a chunked job's chunks not embedded yet, then marks it ready. */
  #embedAndFinish(job: IngestionJob): Promise<void> {
    if (!TRACING.on) return this.#embedAndFinishNow(job);
    // A trace of its own per document: its embeddings calls and vector writes are the child spans.
    const attributes = { 'pvai.job': 'ingestion', 'pvai.document_id': job.doc.id, 'pvai.chunks': job.doc.chunkCount };
    return tracedJob('ingestion embed', attributes, () => this.#embedAndFinishNow(job));
  }

  async #embedAndFinishNow(job: IngestionJob): Promise<void> {
    const { store, index, embedder, clock } = this.#deps;
    const { doc } = job;
    const tenant = { accountId: doc.accountId, userId: doc.userId };
    try {
      if (embedder) {
        for (;;) {
          const batch = await store.unembedded(doc.id, this.#options.embedBatch);
          if (batch.length === 0 || this.#pump.closed) break;
          const vectors = await embedder.embed(
            batch.map((c) => c.text),
            this.#pump.signal,
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
          await store.extendLease(doc.id, clock() + this.#options.leaseMs);
        }
        if (this.#pump.closed) return;
      }
      await store.finish(doc.id, { status: 'ready' });
      await store.refreshVersion(tenant);
    } catch (err) {
      if (!this.#pump.closed) await this.#fail(doc, err);
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
    if (this.#pump.closed || jobs.length === 0) return;
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
