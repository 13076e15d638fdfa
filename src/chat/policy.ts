import type { Account } from '../accounts/index.js';
import type { TierRules } from '../config/index.js';
import { AppError } from '../errors/index.js';

/** The parts of a chat request the tier rules and message rules look at (the schema checked the rest). */
export interface ChatRequestShape {
  model: string;
  rag_k?: number;
  messages: Array<{
    role: string;
    content?: string | null;
    name?: string;
    tool_call_id?: string;
    tool_calls?: unknown[];
  }>;
}

function invalidMessage(index: number, field: string, reason: string): AppError {
  const path = `messages[${index}].${field}`;
  return new AppError('INVALID_PARAMETER', `${path} ${reason}`, { field: path, reason });
}

/**
 * Rules a JSON schema cannot say well: which fields each role needs. `content` may be null only on
 * an assistant turn that carries tool calls; `tool` turns answer a call by id; legacy `function`
 * turns name the function.
 */
export function checkMessages(messages: ChatRequestShape['messages']): void {
  messages.forEach((m, i) => {
    const hasText = typeof m.content === 'string';
    if (m.role === 'assistant') {
      if (!hasText && !(m.tool_calls && m.tool_calls.length > 0)) {
        throw invalidMessage(i, 'content', 'is required unless the assistant message has tool_calls');
      }
    } else if (!hasText) {
      throw invalidMessage(i, 'content', 'is required');
    }
    if (m.role === 'tool' && !m.tool_call_id) throw invalidMessage(i, 'tool_call_id', 'is required for role tool');
    if (m.role === 'function' && !m.name) throw invalidMessage(i, 'name', 'is required for role function');
    if (m.tool_calls && m.role !== 'assistant')
      throw invalidMessage(i, 'tool_calls', 'is only allowed on assistant messages');
  });
}

/** Tier rules of decisions.md: the model must be in the tier, rag_k at most the tier's maximum. */
export function checkTierAllowsChat(request: ChatRequestShape, account: Account, rules: TierRules): void {
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
