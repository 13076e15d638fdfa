/** Who owns what an index holds (documents, memories): an end user inside an account. Every read and write is scoped by both. */
export interface Tenant {
  accountId: string;
  userId: string;
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
 * chunks. Adapters: SQL (`sql/`: in-memory lexical and int8 vector sets over the chunk rows, the embedded
 * default) and Qdrant (`qdrant/`). One contract suite (`test/retrieval/chunk-index-contract.ts`) runs against each.
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
