/** OpenAI-compatible embeddings (`POST /z1/embeddings`) on the service's embedding model, RAG's Embedder port. */
export {
  type EmbeddingJob,
  type EmbeddingResult,
  EmbeddingService,
  type EmbeddingServiceDeps,
} from './embedding-service.js';
export { embeddingOperations } from './operations.js';
export { embeddingListBody, readInput } from './wire.js';
