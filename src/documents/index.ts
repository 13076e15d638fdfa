/**
 * Documents per end user: upload and extraction, chunking, the ingestion worker, the operations, and the chat's
 * `documents` context source. Finding chunks is the retrieval engine's (`retrieval/`); only `compose.ts` imports this.
 */

export { documentsCapability } from './capability.js';
export { chunkText } from './chunker.js';
export { DocumentService } from './document-service.js';
export { DEFAULT_INGESTION } from './ingestion-worker.js';
export { documentBody } from './operations.js';
export { withDocuments } from './standalone.js';
export type { DocumentRecord } from './types.js';
export { fileToDocument } from './upload.js';
