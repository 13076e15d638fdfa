import type { Owner } from '../files/index.js';
import type { AttributeFilter } from '../kernel/index.js';
import type { Tenant } from '../retrieval/index.js';

export type { Owner };

/** A vector store: a set of files, each made a document of the store's own tenant (`storeTenant`). */
export interface VectorStoreRecord extends Owner {
  id: string;
  name: string | null;
  description: string | null;
  metadata: Record<string, string>;
  /** The store's default chunk window for files attached without one. */
  chunking: { chars: number; overlapChars: number } | null;
  expiresAfterDays: number | null;
  lastActiveAt: number;
  /** Its index entries were removed by the expiry sweep. */
  expired: boolean;
  createdAt: number;
}

export type StoreFileStatus = 'in_progress' | 'completed' | 'failed' | 'cancelled';

/** A file as one store holds it: the document made of it (once its text is extracted) and its attributes. */
export interface StoreFileRecord {
  vectorStoreId: string;
  fileId: string;
  accountId: string;
  documentId: string | null;
  batchId: string | null;
  attributes: Record<string, string | number | boolean>;
  chunking: { chars: number; overlapChars: number };
  bytes: number;
  /** Stored for the outcomes the document cannot say (extraction failed, cancelled); else the document's. */
  status: StoreFileStatus;
  lastError: { code: 'server_error' | 'unsupported_file' | 'invalid_file'; message: string } | null;
  filename: string;
  createdAt: number;
}

export interface BatchRecord {
  id: string;
  vectorStoreId: string;
  accountId: string;
  cancelled: boolean;
  createdAt: number;
}

export interface FileCounts {
  in_progress: number;
  completed: number;
  failed: number;
  cancelled: number;
  total: number;
}

/** A chunk a store's search found (the documents' match, as the store reads it). */
export interface StoreMatch {
  id: string;
  documentId: string;
  text: string;
  score: number;
  page: number | null;
  charStart: number;
  charEnd: number;
}

/** A file's text ready to store as a document: what the documents' extraction makes of its bytes. */
interface StoreDocumentInput {
  title?: string | undefined;
  text: string;
  metadata?: Record<string, unknown> | undefined;
  contentType: string;
  sizeBytes: number;
  pages?: readonly number[];
  chunking?: { chars: number; overlapChars: number } | undefined;
}

/**
 * What a vector store needs of the documents' engine (`DocumentService`, given by the composition root): a store's
 * files are documents of its own tenant, ingested, indexed and searched there.
 */
export interface StoreDocuments {
  /** Stores the document and queues its ingestion; `waitMs: 0` answers at once. */
  create(tenant: Tenant, input: StoreDocumentInput, options: { waitMs: 0 }): Promise<{ id: string }>;
  /** Waits, within the upload's bound, for the document to be indexed (or to fail). */
  settled(tenant: Tenant, id: string): Promise<void>;
  delete(tenant: Tenant, id: string): Promise<void>;
  forget(tenant: Tenant): Promise<number>;
  search(
    tenant: Tenant,
    query: string,
    k: number,
    signal?: AbortSignal,
    options?: { filter?: AttributeFilter | undefined; minRelevance?: number | undefined },
  ): Promise<StoreMatch[]>;
  version(tenant: Tenant): Promise<number>;
  text(tenant: Tenant, id: string): Promise<string>;
  setMetadata(tenant: Tenant, id: string, metadata: Record<string, unknown>): Promise<void>;
}

/** The documents' extraction of a file (format check, text, pages), as an upload to `/z1/rag/documents` reads one. */
export type ReadFile = (
  data: Buffer,
  filename: string,
  contentType: string,
  given: { title?: string; metadata?: Record<string, unknown> },
) => Promise<StoreDocumentInput>;
