export {
  type DownloadProgress,
  downloadModel,
} from './download-model.js';
export { getSharedLlama } from './llama-runtime.js';
export type { LocalEngineSettings } from './local-engine.js';
export { LocalChatProvider } from './local-provider.js';
export { createProgressPrinter, formatBytes, formatProgressBar } from './progress-bar.js';
