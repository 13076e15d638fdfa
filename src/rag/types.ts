/** Who owns a document: an end user inside an account. Every read and write is scoped by both. */
export interface Tenant {
  accountId: string;
  userId: string;
}

export type DocumentStatus = 'processing' | 'ready' | 'failed';

export interface DocumentRecord extends Tenant {
  id: string;
  title: string;
  contentType: string;
  sizeBytes: number;
  metadata: Record<string, unknown>;
  status: DocumentStatus;
  chunkCount: number;
  chunksEmbedded: number;
  failure: { code: string; message: string } | null;
  createdAt: number;
}

/** A window of a document's extracted text; `text === documentText.slice(charStart, charEnd)`. */
export interface Chunk {
  id: string;
  documentId: string;
  ordinal: number;
  text: string;
  charStart: number;
  charEnd: number;
  /** 1-based page the chunk starts on (PDF), or null. */
  page: number | null;
}

/** A document's chunks, as one write of several documents takes them. */
export interface DocumentChunks {
  documentId: string;
  chunks: readonly Chunk[];
  /**
   * No chunk of this document was ever put before (the worker's first attempt at it): the adapter may
   * skip looking for earlier chunks to replace. Wrongly set, stale chunks of the document could stay
   * until it is deleted; unset, they are always replaced.
   */
  fresh?: boolean;
}

export interface ChunkMatch extends Chunk {
  title: string;
  /** Fused score, higher is better. */
  score: number;
}

/**
 * Turns texts into unit-length vectors. The id and dimension are recorded with the stored vectors.
 * A text with nothing the model reads (no token: a zero-width space, control characters, whitespace) has no
 * vector: `undefined` in its place, and whatever holds that text is found by its words alone. Such texts are
 * the user's to send; they are never an error.
 */
export interface Embedder {
  readonly id: string;
  dimension(): Promise<number>;
  /**
   * `onTokens`, when given, is told the tokens each batch cost, as the model's tokenizer counts them (local) or as
   * the upstream's `usage` reports them (an upstream that reports none never calls it).
   */
  embed(
    texts: readonly string[],
    signal?: AbortSignal,
    onTokens?: (tokens: number) => void,
  ): Promise<Array<Float32Array | undefined>>;
  /**
   * The model's own tokenizer, when the adapter runs the model in this process. An upstream counts, bounds and
   * embeds texts its own way, so an adapter for one has none.
   */
  readonly tokenizer?: EmbeddingTokenizer;
  close(): Promise<void>;
}

/** What the embeddings endpoint needs to know of a text before the model reads it (to bound and price it). */
export interface EmbeddingTokenizer {
  /** Each text's tokens as the model reads them, its own start and end tokens not counted (OpenAI counts so too). */
  count(texts: readonly string[]): Promise<number[]>;
  /** The model's window, and the most tokens of one text it holds (`embed` cuts a longer text there). */
  limits(): Promise<{ contextTokens: number; maxTokensPerText: number }>;
  /**
   * The model's vector for a text it reads nothing of (where `embed` gives none): the empty text, its start and
   * end tokens alone, as sentence-transformers embeds such a text.
   */
  emptyText(): Promise<Float32Array>;
}

/**
 * Documents, chunk text and spans, ingestion jobs, per-user versions and progress counts. One adapter
 * per database dialect. What makes chunks findable is the ChunkIndex's.
 */
export interface DocumentStore {
  /** Stores the document with its text and marks it `processing` (the job) in one statement. */
  insert(doc: DocumentRecord, text: string, pages: readonly number[]): Promise<void>;
  get(tenant: Tenant, id: string): Promise<DocumentRecord | undefined>;
  /** Which of these documents still exist (any tenant's: ids are unique), in one read. */
  existing(ids: readonly string[]): Promise<Set<string>>;
  list(tenant: Tenant): Promise<DocumentRecord[]>;
  /** Removes the document and its chunks; false when it is not this tenant's. */
  delete(tenant: Tenant, id: string): Promise<boolean>;
  /** Documents still `processing` (unfinished ingestion jobs), all tenants: for the metrics. */
  countProcessing(): Promise<number>;
  version(tenant: Tenant): Promise<number>;
  bumpVersion(tenant: Tenant): Promise<void>;
  /** Leases one `processing` document whose lease has run out (a crashed or restarted worker's). */
  claim(now: number, leaseMs: number): Promise<IngestionJob | undefined>;
  /**
   * Leases the oldest such document that has no chunks yet and, when it is of at most `maxBytes`, up to
   * `limit - 1` more such small ones, oldest first: a backlog of small documents is chunked and indexed
   * in one write per tenant.
   */
  claimUnchunked(now: number, leaseMs: number, maxBytes: number, limit: number): Promise<IngestionJob[]>;
  /** Voids every lease (only when this process is the database's sole writer, at start). */
  releaseLeases(): Promise<void>;
  /** Voids these documents' leases: chunked, they wait for any worker to embed them. */
  release(ids: readonly string[]): Promise<void>;
  /** Replaces the documents' chunks in one transaction (idempotent, so a resumed job starts again cleanly). */
  putChunks(documents: ReadonlyArray<{ doc: DocumentRecord; chunks: readonly Chunk[] }>): Promise<void>;
  /** Chunks of the document not yet marked embedded, in order. */
  unembedded(documentId: string, limit: number): Promise<Chunk[]>;
  /** Marks chunks embedded (their vectors are in the index) and updates the document's progress count. */
  markEmbedded(documentId: string, chunkIds: readonly string[]): Promise<void>;
  finish(id: string, result: { status: 'ready' } | { status: 'failed'; code: string; message: string }): Promise<void>;
  extendLease(id: string, until: number): Promise<void>;
  /** The tenant's chunks by id (with their document's title); ids not found are left out. */
  chunks(tenant: Tenant, ids: readonly string[]): Promise<ChunkMatch[]>;
}

/** A leased `processing` document with what its worker needs. */
export interface IngestionJob {
  doc: DocumentRecord;
  text: string;
  /** Where each page starts in `text` (PDF), else empty. */
  pages: number[];
  /** How many times the document has been claimed, this claim included: 1 the first time. */
  attempts: number;
}

/** One ranked chunk from an index; higher score is better (scales differ between modes and adapters). */
export interface ChunkHit {
  chunkId: string;
  score: number;
}

export type SearchMode = 'hybrid' | 'lexical' | 'dense';

export interface ChunkQuery {
  text: string;
  /** The query's embedding; without it a hybrid search is lexical only. */
  vector?: Float32Array | undefined;
  k: number;
  /** Default `hybrid`: lexical and dense ranks fused (RRF). The others exist for benchmarks and tests. */
  mode?: SearchMode;
}

/**
 * Retrieval: what makes a tenant's chunks findable, by words and by meaning. The document store stays
 * the source of truth for documents and chunk text; an index holds what search needs and answers with
 * chunk ids. Every call is scoped by the tenant: no query, write or delete reaches another tenant's
 * chunks. Adapters: SQL (FTS5 / tsvector + vectors, embedded default) and Qdrant. One contract suite
 * (`test/rag/chunk-index-contract.ts`) runs against each.
 */
export interface ChunkIndex {
  /** Short name for logs and benchmarks (`sqlite`, `postgres`, `qdrant`). */
  readonly name: string;
  /**
   * Creates what is missing (idempotent, safe from several replicas at once). With an embedding model:
   * records its id and dimension on first use and refuses, with a message that says what to do, an index
   * built with another model or dimension.
   */
  prepare(embedding?: { id: string; dimension: number }): Promise<void>;
  /** Makes the document's chunks lexically findable at once, replacing whatever it had indexed before. */
  putChunks(tenant: Tenant, documentId: string, chunks: readonly Chunk[]): Promise<void>;
  /**
   * `putChunks` for several documents of the tenant in as few durable writes as the adapter can (the
   * ingestion worker's backlog): all of them are findable when it resolves. A failed call may have put
   * some of them (Qdrant takes several requests); putting them again replaces them.
   */
  putDocuments(tenant: Tenant, documents: readonly DocumentChunks[]): Promise<void>;
  /** Adds vectors to chunks already put (unit length; the dot product is the cosine). */
  putVectors(
    tenant: Tenant,
    documentId: string,
    vectors: ReadonlyArray<{ chunkId: string; vector: Float32Array }>,
  ): Promise<void>;
  /** Removes every trace of the document (lexical and dense). */
  deleteDocument(tenant: Tenant, documentId: string): Promise<void>;
  /** Removes every chunk of the tenant (a user forgotten). */
  deleteTenant(tenant: Tenant): Promise<void>;
  /** The tenant's best `k` chunks for the query, best first. */
  search(tenant: Tenant, query: ChunkQuery): Promise<ChunkHit[]>;
  close(): Promise<void>;
}
