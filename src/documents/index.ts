/**
 * Documents per end user: upload and extraction, chunking, the ingestion worker, the operations, and the chat's
 * `documents` context source. Finding chunks is the retrieval engine's (`retrieval/`); only `compose.ts` imports this.
 */

export { chunkText } from './chunker.js';
export { documentsContextSource } from './context-source.js';
export { DocumentService } from './document-service.js';
export { DEFAULT_INGESTION } from './ingestion-worker.js';
export { documentBody, documentOperations } from './operations.js';
export { SqlDocumentStore } from './sql-document-store.js';
export type { DocumentRecord } from './types.js';
export { fileToDocument } from './upload.js';
export { documentsUserData } from './user-data.js';
