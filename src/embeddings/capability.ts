import type { Logger } from 'pino';
import type { ModelNames } from '../tiers/index.js';
import { EmbeddingService, type EmbeddingServiceDeps } from './embedding-service.js';
import { embeddingOperations } from './operations.js';

/** The window `/z1/models` reports for an embedding upstream that states none: OpenAI's embedding models' (8191). */
const DEFAULT_UPSTREAM_EMBEDDING_CONTEXT = 8191;

/** `POST /z1/embeddings`, on the embedder documents and memory use: one model, the same vector for a text. */
export function embeddingsCapability(
  deps: Omit<EmbeddingServiceDeps, 'upstreamContextTokens'> & {
    upstreamContextTokens?: number;
    logger: Logger;
    names: ModelNames;
  },
) {
  const service = new EmbeddingService({
    ...deps,
    upstreamContextTokens: deps.upstreamContextTokens ?? DEFAULT_UPSTREAM_EMBEDDING_CONTEXT,
  });
  return {
    name: 'embeddings',
    service,
    operations: embeddingOperations({ embeddings: service, names: deps.names }),
    /** The model's limits for `/z1/models`: an upstream away when first asked leaves PV-EMBED out, not the listing. */
    limits: () =>
      service.limits().catch((err: unknown) => {
        deps.logger.warn({ err }, 'the embedding model did not say its limits');
        return undefined;
      }),
  };
}
