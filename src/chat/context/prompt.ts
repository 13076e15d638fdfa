import { type ChatMessage, contentText, imageTokens } from '../../providers/index.js';
import type { Citation, ContextContribution } from './source.js';

/**
 * A conservative token estimate: English averages ~4 characters a token with the tokenizers of the
 * models pvai routes to (SmolLM2, Llama, GPT); counting 3 over-estimates, so the budget errs on the
 * side of leaving room for the answer.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3);
}

/** Tokens a message costs beyond its text (role markers of the chat template). */
const PER_MESSAGE_OVERHEAD = 4;

/** A conversation's tokens: its text as `estimateTokens` counts it, an image as `imageTokens` estimates it. */
function estimateMessagesTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) {
    const calls = 'tool_calls' in message && message.tool_calls ? JSON.stringify(message.tool_calls) : '';
    total += estimateTokens(contentText(message.content) + calls) + imageTokens(message.content) + PER_MESSAGE_OVERHEAD;
  }
  return total;
}

export interface PromptBudget {
  /** The routed model's context window, in tokens. */
  contextTokens: number;
  /** Tokens kept for the answer (the request's max_tokens, or the target's default). */
  answerTokens: number;
}

export interface AssembledContext {
  /** System messages placed before the conversation. */
  system: string[];
  /** One per passage that made it into the prompt, numbered as the prompt numbers them. */
  citations: Citation[];
}

const isEmpty = (c: ContextContribution) => !c.notes?.length && !c.passages?.length;

const NOTES_HEADER = 'What you know about the user (use it when relevant):';
const SOURCES_HEADER =
  'Answer from the numbered sources below when they are relevant, and cite each source you use as [n].';

/**
 * Puts the sources' contributions into the prompt in one place: notes first, then numbered passages,
 * while they fit in what the conversation and the answer leave of the routed model's context. A
 * passage that does not fit is left out whole, and so is its citation: a citation always points at
 * text the model saw.
 */
export function assembleContext(
  contributions: readonly ContextContribution[],
  conversation: readonly ChatMessage[],
  budget: PromptBudget,
): AssembledContext {
  const system: string[] = [];
  const citations: Citation[] = [];
  // Most requests bring nothing to place (a user without memories, no documents asked for): nothing to
  // measure the conversation against either.
  if (contributions.every(isEmpty)) return { system, citations };
  let left = budget.contextTokens - budget.answerTokens - estimateMessagesTokens(conversation);

  const notes: string[] = [];
  for (const note of contributions.flatMap((c) => c.notes ?? [])) {
    const cost = estimateTokens(note) + 2;
    if (cost > left) continue;
    left -= cost;
    notes.push(`- ${note}`);
  }
  if (notes.length > 0) system.push(`${NOTES_HEADER}\n${notes.join('\n')}`);

  const passages: string[] = [];
  left -= estimateTokens(SOURCES_HEADER) + PER_MESSAGE_OVERHEAD;
  for (const passage of contributions.flatMap((c) => c.passages ?? [])) {
    const index = citations.length + 1;
    const text = `[${index}] ${passage.citation.title}\n${passage.text}`;
    const cost = estimateTokens(text) + 1;
    if (cost > left) continue;
    left -= cost;
    passages.push(text);
    citations.push({ ...passage.citation, index });
  }
  if (passages.length > 0) system.push(`${SOURCES_HEADER}\n\n${passages.join('\n\n')}`);
  return { system, citations };
}
