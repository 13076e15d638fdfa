import type { UserDataSection } from '../users/index.js';
import { documentBody } from './operations.js';
import type { RagService } from './rag-service.js';

/**
 * The `documents` section of an end user's data: each document as the API shows it, with its extracted text.
 * The erase is `RagService.forget`: documents, chunks, jobs, index entries (embedded or Qdrant), then the
 * version the cache keys of the user's RAG answers hold.
 */
export function ragUserData(rag: RagService): UserDataSection<'documents'> {
  return {
    name: 'documents',
    async *export(tenant) {
      for await (const { doc, text } of rag.exportDocuments(tenant)) yield { ...documentBody(doc), text };
    },
    erase: (tenant) => rag.forget(tenant),
  };
}
