import type { Config } from '../config/index.js';
import { QdrantChunkIndex } from './qdrant/qdrant-chunk-index.js';
import type { ChunkIndex } from './types.js';

/**
 * The retrieval adapter the configuration asks for: Qdrant when `QDRANT_URL` is set, otherwise the
 * embedded SQL index over the service's own database (`sql`, built only when it is the one chosen).
 */
export function chunkIndexFor(
  config: Pick<Config, 'qdrantUrl' | 'qdrantApiKey' | 'qdrantCollection'>,
  sql: () => ChunkIndex,
): ChunkIndex {
  if (!config.qdrantUrl) return sql();
  return new QdrantChunkIndex({
    url: config.qdrantUrl,
    apiKey: config.qdrantApiKey,
    collection: config.qdrantCollection,
  });
}
