import { randomBytes } from 'node:crypto';
import { AppError } from '../errors/index.js';
import { type AttributeFilter, matchesFilter } from '../kernel/index.js';
import { fusedRelevance, type Tenant } from '../retrieval/index.js';
import type { PageStarts } from './chunker.js';
import { type IngestionOptions, type IngestionPorts, IngestionWorker } from './ingestion-worker.js';
import type { ChunkMatch, ChunkWindow, DocumentRecord } from './types.js';

/** A filtered search reads this many times `k` candidates (the index filters by tenant, not by metadata)… */
const FILTER_DEPTH = 5;
/** …and at most this many. */
const MAX_FILTERED_DEPTH = 500;

/** How long an upload waits for its own document to become ready before answering `processing`. */
const READY_WAIT_MS = 1500;
/** Documents per page of a user's export (their metadata; the texts are read one by one). */
const EXPORT_PAGE = 100;

export interface NewDocument {
  title?: string | undefined;
  text: string;
  metadata?: Record<string, unknown> | undefined;
  contentType: string;
  sizeBytes: number;
  pages?: PageStarts;
  /** The document's own chunk window; the chunker's default when absent. */
  chunking?: ChunkWindow | undefined;
}

export interface DocumentServiceDeps extends IngestionPorts {
  readyWaitMs?: number;
  /** The ingestion worker's claims and writes (DEFAULT_INGESTION unless a bench or test says otherwise). */
  ingestion?: Partial<IngestionOptions> | undefined;
}

/**
 * Documents per (account, user): stored durably first, then chunked and embedded by the ingestion worker
 * (`ingestion-worker.ts`: a `processing` document is its job, which any worker resumes after a crash or
 * restart). The store holds the documents and chunk text; the index makes the chunks findable (hybrid:
 * the lexical and dense rankings fused).
 */
export class DocumentService {
  readonly #deps: DocumentServiceDeps;
  readonly #waiters = new Map<string, Array<() => void>>();
  readonly #worker: IngestionWorker;

  constructor(deps: DocumentServiceDeps) {
    this.#deps = deps;
    this.#worker = new IngestionWorker({ ...deps, settled: (id) => this.#settled(id), options: deps.ingestion });
  }

  /** Prepares the index (which refuses one built with another embedding model) and starts the worker. */
  async start(): Promise<void> {
    const { index, embedder } = this.#deps;
    // The model is loaded now (~2.5 s for MiniLM): a broken model file stops the start with its reason,
    // and the first upload's bounded wait is not spent loading the model.
    await index.prepare(embedder ? { id: embedder.id, dimension: await embedder.dimension() } : undefined);
    await this.#worker.start();
  }

  /** `waitMs`: how long to wait for the document to be ready (the upload's bounded wait unless given; 0: none). */
  async create(tenant: Tenant, input: NewDocument, options: { waitMs?: number } = {}): Promise<DocumentRecord> {
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
      chunking: input.chunking ?? null,
    };
    // Bumped before too: a stored document always has its user's version row, which the ingestion worker's
    // refreshVersion (an update, never an insert) then changes as the document becomes findable.
    await this.#deps.store.bumpVersion(tenant);
    await this.#deps.store.insert(doc, input.text, input.pages ?? []);
    await this.#deps.store.bumpVersion(tenant);
    const waitMs = options.waitMs ?? this.#deps.readyWaitMs ?? READY_WAIT_MS;
    const done = waitMs > 0 ? this.#waitFor(doc.id, waitMs) : undefined;
    this.#worker.kick();
    await done;
    return (await this.#deps.store.get(tenant, doc.id)) ?? doc;
  }

  /** Waits up to `ms` for the document to be ready or failed (at once when it is already). */
  async settled(tenant: Tenant, id: string, ms = READY_WAIT_MS): Promise<void> {
    const done = this.#waitFor(id, ms);
    const doc = await this.#deps.store.get(tenant, id);
    if (doc?.status !== 'processing') this.#settled(id);
    await done;
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

  /** The document's extracted text (what its chunks' spans point into). */
  async text(tenant: Tenant, id: string): Promise<string> {
    const text = await this.#deps.store.text(tenant, id);
    if (text === undefined) throw new AppError('NOT_FOUND', `No document ${id}`);
    return text;
  }

  /** Replaces the document's metadata: filtered searches and cached answers see the new one at once. */
  async setMetadata(tenant: Tenant, id: string, metadata: Record<string, unknown>): Promise<void> {
    if (!(await this.#deps.store.setMetadata(tenant, id, metadata)))
      throw new AppError('NOT_FOUND', `No document ${id}`);
    await this.#deps.store.bumpVersion(tenant);
  }

  /**
   * Forgets the user (an erase): their documents with text and chunks, the jobs of those still processing, their
   * index entries, then their version. In that order: until the version goes, a chat reads the old one, which
   * no later version repeats; once it is gone (the version a user without documents has), nothing of theirs is
   * left to be found. A job already running for one of the documents finds it deleted and cleans the index
   * again (ingestion-worker.ts). Returns how many documents there were.
   */
  async forget(tenant: Tenant): Promise<number> {
    const deleted = await this.#deps.store.deleteTenant(tenant);
    await this.#deps.index.deleteTenant(tenant);
    await this.#deps.store.deleteVersion(tenant);
    return deleted;
  }

  /** The user's documents with their text, oldest first, read a page at a time (the user's export). */
  async *exportDocuments(
    tenant: Tenant,
    pageSize = EXPORT_PAGE,
  ): AsyncGenerator<{ doc: DocumentRecord; text: string }> {
    let after: DocumentRecord | undefined;
    for (;;) {
      const page = await this.#deps.store.exportPage(tenant, after, pageSize);
      for (const doc of page) {
        // One document's text at a time (up to 24 MiB each); one deleted meanwhile is left out.
        const text = await this.#deps.store.text(tenant, doc.id);
        if (text !== undefined) yield { doc, text };
      }
      after = page.at(-1);
      if (page.length < pageSize) return;
    }
  }

  /** Ingestion jobs not finished yet (documents `processing`), for the metrics. */
  processingCount(): Promise<number> {
    return this.#deps.store.countProcessing();
  }

  /** Changes whenever what search could return for the user changes (cache key of RAG answers). */
  async version(tenant: Tenant): Promise<number> {
    return this.#deps.store.version(tenant);
  }

  /**
   * The best `k` chunks for the query. With `filter`, only chunks of documents whose metadata passes it
   * (searched five times as deep, then filtered: the index knows no metadata); with `minRelevance`, only
   * chunks at least that relevant (`fusedRelevance`, 0–1).
   */
  async search(
    tenant: Tenant,
    query: string,
    k: number,
    signal?: AbortSignal,
    options: { filter?: AttributeFilter | undefined; minRelevance?: number | undefined } = {},
  ): Promise<ChunkMatch[]> {
    const { store, index, embedder } = this.#deps;
    const vector = embedder ? (await embedder.embed([query], signal))[0] : undefined;
    const deep = options.filter ? Math.min(k * FILTER_DEPTH, MAX_FILTERED_DEPTH) : k;
    let hits = await index.search(tenant, { text: query, vector, k: deep });
    if (options.minRelevance !== undefined) {
      const floor = options.minRelevance;
      hits = hits.filter((h) => fusedRelevance(h.score) >= floor);
    }
    const byId = new Map(
      (
        await store.chunks(
          tenant,
          hits.map((h) => h.chunkId),
        )
      ).map((c) => [c.id, c]),
    );
    // A hit the store does not know (a document deleted a moment ago) is left out.
    const found = hits.flatMap((h) => {
      const chunk = byId.get(h.chunkId);
      return chunk ? [{ ...chunk, score: h.score }] : [];
    });
    const { filter } = options;
    if (!filter) return found;
    const passing = new Map<string, boolean>();
    for (const documentId of new Set(found.map((m) => m.documentId))) {
      const doc = await store.get(tenant, documentId);
      passing.set(documentId, doc !== undefined && matchesFilter(doc.metadata, filter));
    }
    return found.filter((m) => passing.get(m.documentId)).slice(0, k);
  }

  async close(): Promise<void> {
    // The embedder and the index are the caller's: memory and web use them too, and close after this.
    await this.#worker.close();
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
}

function firstLine(text: string): string {
  const line = text.trim().split('\n', 1)[0]?.trim() ?? '';
  return line.length > 80 ? `${line.slice(0, 77)}...` : line || 'Untitled';
}
