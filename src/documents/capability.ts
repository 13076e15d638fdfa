import { Extractor } from '../extract/index.js';
import type { Db } from '../storage/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { documentsContextSource } from './context-source.js';
import { DocumentService, type DocumentServiceDeps } from './document-service.js';
import { documentOperations } from './operations.js';
import { SqlDocumentStore } from './sql-document-store.js';
import { fileToDocument } from './upload.js';
import { documentsUserData } from './user-data.js';

/**
 * Documents (RAG): an end user's files, chunked and embedded by the ingestion worker, searched by chat
 * (`use_rag`) and by `/z1/rag/search`. Its start refuses an index built with another embedding model.
 */
export function documentsCapability({
  db,
  ...deps
}: Omit<DocumentServiceDeps, 'store'> & { db: Db; tiers: TierPolicy }) {
  const service = new DocumentService({ ...deps, store: new SqlDocumentStore(db) });
  const extractor = new Extractor();
  return {
    name: 'documents',
    service,
    /** A file's bytes → a document to store (format from the bytes, text extracted): vector stores read files so. */
    readFile: (
      data: Buffer,
      filename: string,
      contentType: string,
      given: { title?: string; metadata?: Record<string, unknown> },
    ) => fileToDocument(data, filename, contentType, extractor, given),
    /** A file stored as `POST /z1/rag/documents` stores an uploaded one (the dashboard's upload form). */
    upload: async (
      tenant: { accountId: string; userId: string },
      file: { data: Buffer; filename: string; contentType: string },
      given: { title?: string | undefined },
    ) => service.create(tenant, await fileToDocument(file.data, file.filename, file.contentType, extractor, given)),
    operations: documentOperations(service, deps.tiers, extractor),
    context: documentsContextSource(service),
    userData: documentsUserData(service, db),
    start: () => service.start(),
    close: () => service.close(),
  };
}
