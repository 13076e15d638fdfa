export { supportedSentences } from './attribution.js';
export { assembleContext, estimateTokens, type PromptBudget } from './prompt.js';
export { ContextRegistry } from './registry.js';
export type { Citation, ContextContribution, ContextSource, SourcePassage } from './source.js';
