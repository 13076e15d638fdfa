import type { Config } from '../config/index.js';
import { QdrantChunkIndex } from './qdrant/qdrant-chunk-index.js';
import { qdrantUrls } from './qdrant/qdrant-nodes.js';
import type { ChunkIndex } from './types.js';

/**
 * The retrieval adapter the configuration asks for: Qdrant when `QDRANT_URL` is set, otherwise the
 * embedded SQL index over the service's own database (`sql`, built only when it is the one chosen).
 * `warn` is told when the existing Qdrant collection's layout is not the configured one.
 */
export function chunkIndexFor(
  config: Pick<Config, 'qdrantUrl' | 'qdrantApiKey' | 'qdrantCollection' | 'qdrant'>,
  sql: () => ChunkIndex,
  warn?: (message: string) => void,
): ChunkIndex {
  if (!config.qdrantUrl) return sql();
  return new QdrantChunkIndex({
    url: config.qdrantUrl,
    apiKey: config.qdrantApiKey,
    collection: config.qdrantCollection,
    cluster: config.qdrant,
    warn,
  });
}

/**
 * Readiness of the vector index: undefined for the embedded one (it is the database), else whether a Qdrant
 * node answers its /readyz within 2 s (the nodes of a cluster in turn, as the index fails over between them;
 * the detail names those that did not answer).
 */
export function vectorIndexCheck(
  config: Pick<Config, 'qdrantUrl' | 'qdrantApiKey'>,
): (() => Promise<{ ok: boolean; detail: string }>) | undefined {
  if (!config.qdrantUrl) return undefined;
  const urls = qdrantUrls(config.qdrantUrl);
  const headers: Record<string, string> = config.qdrantApiKey ? { 'api-key': config.qdrantApiKey } : {};
  const check = async (url: string) => {
    try {
      const res = await fetch(new URL('/readyz', url), { headers, signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      return res.ok ? undefined : `answered HTTP ${res.status}`;
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code;
      return `could not be reached (${cause ?? (err as Error).message})`;
    }
  };
  return async () => {
    const failures: string[] = [];
    for (const url of urls) {
      const failure = await check(url);
      if (failure === undefined) {
        const down = failures.length > 0 ? `; ${failures.join('; ')}` : '';
        return { ok: true, detail: `qdrant ${url}${down}` };
      }
      failures.push(urls.length > 1 ? `${url} ${failure}` : failure);
    }
    return { ok: false, detail: `qdrant ${failures.join('; ')}` };
  };
}
