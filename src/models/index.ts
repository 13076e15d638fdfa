/** The model catalogue: what each PV model (and PV-EMBED) is for, what serves it now, what it costs, and its aliases. */

export { modelsCapability } from './capability.js';
export { creditsPerRequest, type EmbeddingLimits, embeddingCredits } from './catalog.js';
export { embeddingServer } from './served-by.js';
