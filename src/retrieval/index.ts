/**
 * The retrieval engine that documents (`documents/`), memory and web grounding share: the `ChunkIndex` port and its two
 * adapters (`sql/` over the service's own database, the embedded default; `qdrant/`), the embedders that turn text
 * into vectors (`embedders/`), and rank fusion. It knows chunks and tenants, never documents or memories.
 */

export { BackgroundEmbedder } from './embedders/background-embedder.js';
export { createEmbedder, defaultEmbeddingModelPath } from './embedders/create.js';
export { LocalEmbedder } from './embedders/local-embedder.js';
export { fusedRelevance, reciprocalRankFusion } from './fusion.js';
export { chunkIndexFor, vectorIndexCheck } from './index-for.js';
export { QdrantChunkIndex } from './qdrant/qdrant-chunk-index.js';
export { qdrantUrls } from './qdrant/qdrant-nodes.js';
export { SqlChunkIndex } from './sql/sql-chunk-index.js';
/** The SQL index's in-memory int8 vector set and its exact rerank, which `bench/vector-index.ts` measures alone. */
export { rerank, VectorSet } from './sql/vector-set.js';
export { tracedEmbedder, tracedIndex } from './traced.js';
export type {
  Chunk,
  ChunkHit,
  ChunkIndex,
  Embedder,
  SearchMode,
  Tenant,
} from './types.js';
