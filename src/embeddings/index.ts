/** OpenAI-compatible embeddings (`POST /z1/embeddings`) on the service's embedding model, RAG's Embedder port. */

export { embeddingsCapability } from './capability.js';
