/** The model catalogue: what each PV model is for and what it costs, and the operations that list it. */
export { creditsPerRequest, MODELS, type ModelInfo, modelResource } from './catalog.js';
export { modelOperations } from './operations.js';
