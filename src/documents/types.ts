import type { Chunk, Tenant } from '../retrieval/index.js';

type DocumentStatus = 'processing' | 'ready' | 'failed';

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
  /** The document's own chunk window (a vector store's `static` strategy); null: the chunker's default. */
  chunking: ChunkWindow | null;
}

/** A chunk window in characters, and how far each chunk starts back into the one before. */
export interface ChunkWindow {
  chars: number;
  overlapChars: number;
}

export interface ChunkMatch extends Chunk {
  title: string;
  /** Fused score, higher is better. */
  score: number;
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
  /** A fresh random version (never a count: see sql-document-store.ts), the user's row made if missing. */
  bumpVersion(tenant: Tenant): Promise<void>;
  /**
   * A fresh version only where the user has one: the ingestion worker's, so a job that outlives an erase of its
   * user does not leave a version row of theirs behind.
   */
  refreshVersion(tenant: Tenant): Promise<void>;
  /** Deletes all of the user's documents, their chunks and jobs; returns how many documents. */
  deleteTenant(tenant: Tenant): Promise<number>;
  /** Deletes the user's version row (an erase, once nothing of theirs is left to be searched), unless they have a document. */
  deleteVersion(tenant: Tenant): Promise<void>;
  /** The user's documents after `after` in (created, id) order, at most `limit`: a page of their export. */
  exportPage(tenant: Tenant, after: DocumentRecord | undefined, limit: number): Promise<DocumentRecord[]>;
  /** Replaces the document's metadata (what filters test); false when it is not the tenant's. */
  setMetadata(tenant: Tenant, id: string, metadata: Record<string, unknown>): Promise<boolean>;
  /** The document's extracted text; undefined when it is not the tenant's (or was deleted). */
  text(tenant: Tenant, id: string): Promise<string | undefined>;
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
