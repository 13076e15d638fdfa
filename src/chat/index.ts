/** Chat completions: the service that owns a request's life, its context sources, and the operation. */
export { routeBudget } from './budget.js';
export {
  type Answer,
  type AnswerPart,
  type CacheStatus,
  ChatService,
  type ChatServiceDeps,
  type StreamedAnswer,
} from './chat-service.js';
export {
  assembleContext,
  type Citation,
  type ContextContribution,
  ContextRegistry,
  type ContextSource,
  estimateTokens,
  type PromptBudget,
  type SourcePassage,
  type SupportedSentence,
  supportedSentences,
} from './context/index.js';
export { downloadPath, locateLocalModel, modelsDir } from './local-model.js';
export { type LocalModelStatus, LocalModelSupervisor } from './local-model-supervisor.js';
export { chatOperations } from './operations.js';
export {
  type ChatCompletionRequest,
  checkToolChoice,
  DEFAULT_TEMPERATURE,
  lastUserText,
} from './request.js';
export type { ResponseMeta } from './wire.js';
