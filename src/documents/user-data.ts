import type { UserDataSection } from '../users/index.js';
import type { DocumentService } from './document-service.js';
import { documentBody } from './operations.js';

/**
 * The `documents` section of an end user's data: each document as the API shows it, with its extracted text.
 * The erase is `DocumentService.forget`: documents, chunks, jobs, index entries (embedded or Qdrant), then the
 * version the cache keys of the user's RAG answers hold.
 */
export function documentsUserData(documents: DocumentService): UserDataSection<'documents'> {
  return {
    name: 'documents',
    async *export(tenant) {
      for await (const { doc, text } of documents.exportDocuments(tenant)) yield { ...documentBody(doc), text };
    },
    erase: (tenant) => documents.forget(tenant),
  };
}
