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

/**
 * Readiness of the vector index: undefined for the embedded one (it is the database), else whether Qdrant
 * answers its /readyz within 2 s.
 */
export function vectorIndexCheck(
  config: Pick<Config, 'qdrantUrl' | 'qdrantApiKey'>,
): (() => Promise<{ ok: boolean; detail: string }>) | undefined {
  const url = config.qdrantUrl;
  if (!url) return undefined;
  const headers: Record<string, string> = config.qdrantApiKey ? { 'api-key': config.qdrantApiKey } : {};
  return async () => {
    try {
      const res = await fetch(new URL('/readyz', url), { headers, signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      return res.ok
        ? { ok: true, detail: `qdrant ${url}` }
        : { ok: false, detail: `qdrant answered HTTP ${res.status}` };
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      return { ok: false, detail: `qdrant could not be reached (${cause ?? (err as Error).message})` };
    }
  };
}
