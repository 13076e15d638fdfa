import type { Db } from '../storage/index.js';
import { tableActivity, type UserDataSection } from '../users/index.js';
import type { DocumentService } from './document-service.js';
import { documentBody } from './operations.js';

/**
 * The `documents` section of an end user's data: each document as the API shows it, with its extracted text.
 * The erase is `DocumentService.forget`: documents, chunks, jobs, index entries (embedded or Qdrant), then the
 * version the cache keys of the user's RAG answers hold.
 */
export function documentsUserData(documents: DocumentService, db: Db): UserDataSection<'documents'> {
  return {
    name: 'documents',
    // Each end user's documents, whatever their status; the newest one's upload is when documents last saw them.
    activity: { counts: 'documents', list: tableActivity(db, 'rag_documents', 'created_at') },
    async *export(tenant) {
      for await (const { doc, text } of documents.exportDocuments(tenant)) yield { ...documentBody(doc), text };
    },
    erase: (tenant) => documents.forget(tenant),
  };
}
