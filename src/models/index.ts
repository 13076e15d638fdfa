/** The model catalogue: what each PV model (and PV-EMBED) is for and what it costs, and the operations that list it. */
export {
  creditsPerRequest,
  type EmbeddingLimits,
  embeddingCredits,
} from './catalog.js';
export { modelOperations } from './operations.js';
