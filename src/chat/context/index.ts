export { type SupportedSentence, supportedSentences } from './attribution.js';
export { type AssembledContext, assembleContext, estimateTokens, type PromptBudget } from './prompt.js';
export { ContextRegistry, type GatheredContext } from './registry.js';
export type { Citation, ContextContribution, ContextSource, SourcePassage } from './source.js';
