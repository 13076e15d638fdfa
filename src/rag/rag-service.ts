import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import { chunkText, type PageStarts } from './chunker.js';
import type { ChunkIndex, ChunkMatch, DocumentRecord, DocumentStore, Embedder, Tenant } from './types.js';

/** How long an upload waits for its own document to become ready before answering `processing`. */
export const READY_WAIT_MS = 1500;
/** A job's lease: another worker (after a crash, or another replica) takes it over once it ran out. */
const LEASE_MS = 30_000;
/** Chunks embedded per batch; the lease is extended and progress written after each. */
const EMBED_BATCH = 16;
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
        while (!this.#closed && (await this.#runOne())) {}
      } while (this.#again && !this.#closed);
    })()
      .catch((err: unknown) => this.#deps.logger.error({ err }, 'document ingestion failed'))
      .finally(() => {
        this.#draining = undefined;
      });
  }

  /** One job: chunks (lexically searchable at once), then vectors batch by batch. False: no job. */
  async #runOne(): Promise<boolean> {
    const { store, index, embedder, clock } = this.#deps;
    const job = await store.claim(clock(), LEASE_MS);
    if (!job) return false;
    const { doc, text, pages } = job;
    const tenant = { accountId: doc.accountId, userId: doc.userId };
    try {
      // The index first, then the store: chunk_count > 0 (stored in the store's one transaction) then means
      // the index has the chunks too, so a job resumed after a crash has only the vectors left to do. A
      // crash in between leaves chunk_count 0 and the resumed job chunks again (the index replaces them).
      if (doc.chunkCount === 0) {
        const chunks = chunkText(doc.id, text, pages);
        if (chunks.length === 0) {
          await store.finish(doc.id, { status: 'failed', code: 'EMPTY_DOCUMENT', message: 'The document has no text' });
          return true;
        }
        await index.putChunks(tenant, doc.id, chunks);
        await store.putChunks(doc, chunks);
        await store.bumpVersion(tenant);
      }
      if (embedder) {
        for (;;) {
          const batch = await store.unembedded(doc.id, EMBED_BATCH);
          if (batch.length === 0 || this.#closed) break;
          const vectors = await embedder.embed(
            batch.map((c) => c.text),
            this.#abort.signal,
          );
          await index.putVectors(
            tenant,
            doc.id,
            batch.map((c, i) => ({ chunkId: c.id, vector: vectors[i] as Float32Array })),
          );
          await store.markEmbedded(
            doc.id,
            batch.map((c) => c.id),
          );
          await store.extendLease(doc.id, clock() + LEASE_MS);
        }
        if (this.#closed) return false;
      }
      await store.finish(doc.id, { status: 'ready' });
      await store.bumpVersion(tenant);
    } catch (err) {
      if (this.#closed) return false;
      this.#deps.logger.error({ err, document_id: doc.id }, 'indexing a document failed');
      await store.finish(doc.id, {
        status: 'failed',
        code: 'INDEXING_FAILED',
        message: `Indexing failed: ${(err as Error).message}`,
      });
    } finally {
      // Deleted while this job wrote to the index (the delete may have cleaned the index before): clean again.
      if (!this.#closed && !(await store.get(tenant, doc.id).catch(() => doc))) {
        await index.deleteDocument(tenant, doc.id).catch((err: unknown) => {
          this.#deps.logger.error({ err, document_id: doc.id }, 'removing a deleted document from the index failed');
        });
      }
      this.#settled(doc.id);
    }
    return true;
  }
}

function firstLine(text: string): string {
  const line = text.trim().split('\n', 1)[0]?.trim() ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}...` : line || 'Untitled';
}
