/** Chat completions: the service that owns a request's life, its context sources, and the operation. */
export { chatCapability } from './capability.js';
export { type AnswerPart, type CacheStatus, ChatService } from './chat-service.js';
export {
  assembleContext,
  type Citation,
  type ContextContribution,
  ContextRegistry,
  type ContextSource,
  estimateTokens,
  type SourcePassage,
  supportedSentences,
} from './context/index.js';
export { downloadPath, locateLocalModel, modelsDir } from './local-model.js';
export { LocalModelSupervisor } from './local-model-supervisor.js';
export { type ChatCompletionRequest, DEFAULT_TEMPERATURE, lastUserText } from './request.js';
