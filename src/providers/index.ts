/**
 * Model providers behind chat completions. The HTTP layer needs only:
 * `createRouter` + `createProviderFactories` (routing and fallback), the `StreamPart` / `Completion`
 * types it renders, and `downloadModel` + `createProgressPrinter` for `pvai models pull`.
 */
export {
  CompletionAccumulator,
  collectCompletion,
  newToolCallId,
  ToolCallAccumulator,
} from './completion-collector.js';
export {
  contentText,
  firstImage,
  hasImage,
  IMAGE_TOKENS,
  IMAGE_TOKENS_LOW_DETAIL,
  imageTokens,
} from './content.js';
export {
  createProgressPrinter,
  type DownloadedModel,
  type DownloadModelOptions,
  type DownloadProgress,
  downloadModel,
  formatBytes,
  formatProgressBar,
  getSharedLlama,
  LOCAL_ENGINE_DEFAULTS,
  LocalChatProvider,
  type LocalEngineSettings,
  type ProgressPrinter,
} from './local/index.js';
export {
  bufferedRequest,
  OPENAI_COMPATIBLE_DEFAULTS,
  OpenAICompatibleProvider,
  type OpenAICompatibleSettings,
} from './openai-compatible/index.js';
export {
  createProviderFactories,
  type ProviderFactoryOptions,
} from './provider-factories.js';
export {
  type AttemptRecord,
  createRouter,
  DEFAULT_MAX_TOKENS,
  type LocalTarget,
  type OpenAICompatibleTarget,
  type ProviderFactories,
  productError,
  type RoutedRequest,
  type Router,
  type Target,
} from './router.js';
export { routeTargets } from './targets.js';
export {
  abortReason,
  type ChatMessage,
  type ChatProvider,
  type Completion,
  type ContentPart,
  type FinishReason,
  type GenerationRequest,
  ProviderError,
  type ProviderErrorKind,
  type StreamPart,
  type ToolCall,
  type ToolChoice,
  type ToolDefinition,
  type Usage,
} from './types.js';
