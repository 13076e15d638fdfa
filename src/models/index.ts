/** The model catalogue: what each PV model (and PV-EMBED) is for and what it costs, and the operations that list it. */

export { modelsCapability } from './capability.js';
export { creditsPerRequest, type EmbeddingLimits, embeddingCredits } from './catalog.js';
