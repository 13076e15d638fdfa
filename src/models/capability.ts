import type { ModelId } from '../kernel/index.js';
import type { TierPolicy } from '../tiers/index.js';
import type { EmbeddingLimits } from './catalog.js';
import { modelOperations } from './operations.js';

interface ModelsDeps {
  tiers: TierPolicy;
  /** The route's window and answer budget when a request sets none (chat's route facts). */
  budget(model: string): { contextTokens: number; answerTokens: number };
  readsImages(model: string): boolean;
  /** The embedding model's limits; undefined without one, or when it could not say them now. */
  embedding(): Promise<EmbeddingLimits | undefined>;
}

/** `/z1/models`: the four PV models for the caller's tier, with their route's limits, and PV-EMBED. */
export function modelsCapability({ tiers, budget, readsImages, embedding }: ModelsDeps) {
  const limitsOf = (model: ModelId) => {
    const { contextTokens, answerTokens } = budget(model);
    return { contextWindow: contextTokens, maxOutputTokens: answerTokens, readsImages: readsImages(model) };
  };
  return { name: 'models', operations: modelOperations(tiers, limitsOf, embedding) };
}
