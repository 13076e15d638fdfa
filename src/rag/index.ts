/**
 * Documents per end user: upload and extraction, chunking, the ingestion worker, the operations, and the chat's
 * `documents` context source. Finding chunks is the retrieval engine's (`retrieval/`); only `compose.ts` imports this.
 */

export { chunkText } from './chunker.js';
export { ragContextSource } from './context-source.js';
export { DEFAULT_INGESTION } from './ingestion-worker.js';
export { documentBody, ragOperations } from './operations.js';
export { RagService } from './rag-service.js';
export { SqlDocumentStore } from './sql-document-store.js';
export type { DocumentRecord } from './types.js';
export { fileToDocument } from './upload.js';
export { ragUserData } from './user-data.js';
