export {
  type DownloadedModel,
  type DownloadModelOptions,
  type DownloadProgress,
  downloadModel,
} from './download-model.js';
export { getSharedLlama } from './llama-runtime.js';
export { LOCAL_ENGINE_DEFAULTS, LocalEngine, type LocalEngineSettings } from './local-engine.js';
export { LocalChatProvider } from './local-provider.js';
export { createProgressPrinter, formatBytes, formatProgressBar, type ProgressPrinter } from './progress-bar.js';
export { toolsToCall } from './request-plan.js';
