import type { ModelId } from '../kernel/index.js';
import type { TierPolicy } from '../tiers/index.js';
import type { EmbeddingLimits } from './catalog.js';
import { modelCatalog, modelOperations } from './operations.js';
import { ggufName, type ModelServer, servedBy } from './served-by.js';

interface ModelsDeps {
  tiers: TierPolicy;
  /** The route's window and answer budget when a request sets none (chat's route facts). */
  budget(model: string): { contextTokens: number; answerTokens: number };
  readsImages(model: string): boolean;
  /** Each PV model's targets, in order (the configuration's routing, defaults filled in). */
  routing: Parameters<typeof servedBy>[0];
  /** The service's local model's GGUF, undefined while there is none. */
  localModel(): string | undefined;
  /** The embedding model's limits; undefined without one, or when it could not say them now. */
  embedding(): Promise<EmbeddingLimits | undefined>;
  /** What serves PV-EMBED: the local embedding model or the embedding upstream. */
  embeddingServer: ModelServer;
}

/** `/z1/models`: the four PV models for the caller's tier, with their route's limits and server, PV-EMBED, aliases. */
export function modelsCapability({ tiers, budget, readsImages, embedding, ...deps }: ModelsDeps) {
  const limitsOf = (model: ModelId) => {
    const { contextTokens, answerTokens } = budget(model);
    return { contextWindow: contextTokens, maxOutputTokens: answerTokens, readsImages: readsImages(model) };
  };
  // The local model may arrive after the start (PVAI_LOCAL_MODEL as a URL): asked again, kept while it is the same.
  let known: { path: string | undefined; servers: ReturnType<typeof servedBy> } | undefined;
  const servers = () => {
    const path = deps.localModel();
    if (known?.path !== path || !known) {
      known = { path, servers: servedBy(deps.routing, path === undefined ? undefined : ggufName(path)) };
    }
    return known.servers;
  };
  const sources = {
    limitsOf,
    servedBy: (model: ModelId) => servers()[model],
    embedding: async () => {
      const limits = await embedding();
      return limits ? { limits, servedBy: deps.embeddingServer } : undefined;
    },
  };
  const catalog = modelCatalog(tiers, sources);
  return { name: 'models', catalog, operations: modelOperations(catalog) };
}
