/** Documents per end user, their ingestion and retrieval, and the chat context source built on them. */

export { queryTerms } from '../text/index.js';
export { chunkIndexFor } from './chunk-index-for.js';
export { chunkText } from './chunker.js';
export { ragContextSource } from './context-source.js';
export { createEmbedder, DEFAULT_EMBEDDING_MODEL_FILE, defaultEmbeddingModelPath } from './embedders.js';
export { DEFAULT_EXTRACTION_LIMITS, type ExtractionLimits, Extractor } from './extract/extractor.js';
export { reciprocalRankFusion } from './fusion.js';
export { LocalEmbedder, normalise } from './local-embedder.js';
export { OpenAIEmbedder, type OpenAIEmbedderOptions } from './openai-embedder.js';
export { documentBody, matchBody, ragOperations } from './operations.js';
export { DEFAULT_QDRANT_COLLECTION, QdrantChunkIndex, type QdrantChunkIndexOptions } from './qdrant-chunk-index.js';
export { type NewDocument, RagService, type RagServiceDeps, READY_WAIT_MS } from './rag-service.js';
export { modelMismatch, SqlChunkIndex } from './sql-chunk-index.js';
export { SqlDocumentStore } from './sql-document-store.js';
export type {
  Chunk,
  ChunkHit,
  ChunkIndex,
  ChunkMatch,
  ChunkQuery,
  DocumentRecord,
  DocumentStore,
  Embedder,
  SearchMode,
  Tenant,
} from './types.js';
export { fileToDocument } from './upload.js';
