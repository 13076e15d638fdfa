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
