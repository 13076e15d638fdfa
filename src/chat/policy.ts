import type { Account } from '../accounts/index.js';
import type { TierRules } from '../config/index.js';
import { AppError } from '../errors/index.js';
import type { ChatCompletionRequest } from './request.js';

/** Tier rules of decisions.md: the model must be in the tier, rag_k at most the tier's maximum. */
export function checkTierAllowsChat(
  request: Pick<ChatCompletionRequest, 'model' | 'rag_k'>,
  account: Account,
  rules: TierRules,
): void {
  if (!rules.models.includes(request.model)) {
    throw new AppError('MODEL_NOT_ALLOWED', `The ${account.tier} tier cannot use ${request.model}`, {
      model: request.model,
      tier: account.tier,
      allowed: rules.models,
    });
  }
  if (request.rag_k !== undefined && request.rag_k > rules.maxRagK) {
    throw new AppError('RAG_K_EXCEEDS_TIER', `rag_k is at most ${rules.maxRagK} on the ${account.tier} tier`, {
      field: 'rag_k',
      max: rules.maxRagK,
    });
  }
}

/**
 * A `tool_choice` that names a function must name one of `tools`; with no `tools` it names none of them.
 * One rule for every provider, before anything is charged or routed: 400 INVALID_PARAMETER on the name.
 */
export function checkToolChoice(request: Pick<ChatCompletionRequest, 'tools' | 'tool_choice'>): void {
  const choice = request.tool_choice;
  if (typeof choice !== 'object' || choice === null) return;
  const name = choice.function.name;
  if (request.tools?.some((tool) => tool.function.name === name)) return;
  throw new AppError('INVALID_PARAMETER', `tool_choice names the function ${name}, which is not in tools`, {
    field: 'tool_choice.function.name',
    reason: 'must name one of the functions in tools',
  });
}
