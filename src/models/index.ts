/** The model catalogue: what each PV model (and PV-EMBED) is for and what it costs, and the operations that list it. */
export {
  creditsPerRequest,
  EMBEDDING_TOKENS_PER_CREDIT,
  type EmbeddingLimits,
  embeddingCredits,
  embeddingModelResource,
  MODELS,
  type ModelInfo,
  modelResource,
} from './catalog.js';
export { modelOperations } from './operations.js';
