import type { TargetConfig } from '../config/index.js';
import { DEFAULT_MAX_TOKENS } from '../providers/index.js';
import type { PromptBudget } from './context/index.js';
import type { ChatCompletionRequest } from './request.js';

/** A context window to assume when a target does not state one: what every model pvai ships with has. */
const DEFAULT_CONTEXT_TOKENS = 4096;

/**
 * The prompt budget of a request on a route: the smallest context window among its targets (a
 * fallback must fit the same prompt) and the largest answer any of them would produce.
 */
export function routeBudget(
  targets: readonly TargetConfig[],
  request: Pick<ChatCompletionRequest, 'max_tokens'>,
  localContextTokens: number | undefined,
): PromptBudget {
  // Loops, not map and spread into Math.min/max: this runs on every chat request.
  let contextTokens = Number.POSITIVE_INFINITY;
  let answerTokens = 0;
  for (const t of targets) {
    const window =
      t.contextTokens ?? (t.provider === 'local' ? localContextTokens : undefined) ?? DEFAULT_CONTEXT_TOKENS;
    contextTokens = Math.min(contextTokens, window);
    answerTokens = Math.max(answerTokens, request.max_tokens ?? t.maxTokens ?? DEFAULT_MAX_TOKENS);
  }
  return { contextTokens, answerTokens };
}
