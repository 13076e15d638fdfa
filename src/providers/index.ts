/**
 * Model providers behind chat completions. The HTTP layer needs only:
 * `createRouter` + `createProviderFactories` (routing and fallback), the `StreamPart` / `Completion`
 * types it renders, and `downloadModel` + `createProgressPrinter` for `pvai models pull`.
 */
export { CompletionAccumulator } from './completion-collector.js';
export {
  contentText,
  firstImage,
  imageTokens,
} from './content.js';
export {
  createProgressPrinter,
  type DownloadProgress,
  downloadModel,
  formatBytes,
  formatProgressBar,
  getSharedLlama,
  LocalChatProvider,
} from './local/index.js';
export { bufferedRequest } from './openai-compatible/index.js';
export { createProviderFactories } from './provider-factories.js';
export {
  createRouter,
  DEFAULT_MAX_TOKENS,
  type ProviderFactories,
  productError,
  type RoutedRequest,
  type Router,
} from './router.js';
export { routeTargets } from './targets.js';
export {
  type ChatMessage,
  type Completion,
  type ContentPart,
  type FinishReason,
  ProviderError,
  type StreamPart,
  type ToolCall,
  type ToolChoice,
  type ToolDefinition,
  type Usage,
} from './types.js';
