/** The OpenAI wire format as the mock writes it: completion bodies, SSE chunk events, and embeddings. */
import type { MockUsage } from './types.js';

export const MODEL = 'mock-model';
export const DEFAULT_USAGE: MockUsage = { prompt_tokens: 12, completion_tokens: 7 };

export function completionBody(
  content: string | null,
  toolCalls: unknown[] | undefined,
  finishReason: string,
  usage: MockUsage | null,
): string {
  return JSON.stringify({
    id: 'chatcmpl-mock',
    object: 'chat.completion',
    created: 0,
    model: MODEL,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
        finish_reason: finishReason,
      },
    ],
    ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
  });
}

export function chunkEvent(delta: Record<string, unknown>, finishReason: string | null = null): string {
  const chunk = {
    id: 'chatcmpl-mock',
    object: 'chat.completion.chunk',
    created: 0,
    model: MODEL,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

export function usageEvent(usage: MockUsage): string {
  const chunk = {
    id: 'chatcmpl-mock',
    object: 'chat.completion.chunk',
    created: 0,
    model: MODEL,
    choices: [],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The SSE events of a text answer: role, one chunk per word, finish, optional usage, [DONE]. */
export function textEvents(text: string, finishReason: string, usage: MockUsage | null): string[] {
  const words = text.match(/\S+\s*/g) ?? [];
  return [
    chunkEvent({ role: 'assistant', content: '' }),
    ...words.map((word) => chunkEvent({ content: word })),
    chunkEvent({}, finishReason),
    ...(usage ? [usageEvent(usage)] : []),
    'data: [DONE]\n\n',
  ];
}

export const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
export const JSON_HEADERS = { 'content-type': 'application/json' };

/** Dimension of the mock's embeddings: a hashed bag of words, so texts sharing words are close. */
export const MOCK_EMBEDDING_DIMENSION = 64;

export function mockEmbedding(text: string): number[] {
  const vector = new Array<number>(MOCK_EMBEDDING_DIMENSION).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (const ch of word) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    vector[(h >>> 0) % MOCK_EMBEDDING_DIMENSION] = (vector[(h >>> 0) % MOCK_EMBEDDING_DIMENSION] ?? 0) + 1;
  }
  return vector;
}
