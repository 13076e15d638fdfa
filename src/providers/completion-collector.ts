import { randomBytes } from 'node:crypto';
import {
  type Completion,
  type FinishReason,
  ProviderError,
  type StreamPart,
  type ToolCall,
  type Usage,
} from './types.js';

/** OpenAI-style call id: `call_` + 24 random alphanumerics. */
export function newToolCallId(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(24);
  let id = 'call_';
  for (const byte of bytes) id += alphabet[byte % alphabet.length];
  return id;
}

/**
 * Rebuilds whole tool calls from `tool-call-delta` parts. Fragments are keyed by `index`
 * (upstreams send id/name once, then argument pieces that must be concatenated in order).
 */
class ToolCallAccumulator {
  private readonly calls = new Map<number, { id: string; name: string; arguments: string }>();

  add(part: Extract<StreamPart, { type: 'tool-call-delta' }>): void {
    let call = this.calls.get(part.index);
    if (!call) {
      call = { id: '', name: '', arguments: '' };
      this.calls.set(part.index, call);
    }
    if (part.id) call.id = part.id;
    if (part.name) call.name += part.name;
    call.arguments += part.argumentsDelta;
  }

  get size(): number {
    return this.calls.size;
  }

  toToolCalls(): ToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({
        id: call.id || newToolCallId(),
        type: 'function' as const,
        function: { name: call.name, arguments: call.arguments },
      }));
  }
}

/**
 * Builds one Completion from stream parts, for streamed and non-streamed answers alike. The text is
 * null only when the answer is tool calls and no text part came (OpenAI's shape for a pure tool call).
 */
export class CompletionAccumulator {
  #text = '';
  #sawText = false;
  readonly #toolCalls = new ToolCallAccumulator();
  #finish: { finishReason: FinishReason; usage: Usage } | undefined;

  add(part: Exclude<StreamPart, { type: 'error' }>): void {
    switch (part.type) {
      case 'text-delta':
        this.#text += part.text;
        this.#sawText = true;
        break;
      case 'tool-call-delta':
        this.#toolCalls.add(part);
        break;
      case 'finish':
        this.#finish = { finishReason: part.finishReason, usage: part.usage };
        break;
    }
  }

  /** The whole answer, once the finish part has been added. */
  result(): Completion | undefined {
    if (!this.#finish) return undefined;
    return {
      text: this.#sawText || this.#toolCalls.size === 0 ? this.#text : null,
      toolCalls: this.#toolCalls.toToolCalls(),
      finishReason: this.#finish.finishReason,
      usage: this.#finish.usage,
    };
  }
}

/**
 * Drains a part stream into one Completion (used by `generate()` of stream-first providers and by tests).
 * An `error` part is rethrown: a caller asking for a whole completion cannot use half of one.
 */
export async function collectCompletion(parts: AsyncIterable<StreamPart>): Promise<Completion> {
  const answer = new CompletionAccumulator();
  for await (const part of parts) {
    if (part.type === 'error') throw part.error;
    answer.add(part);
  }
  const completion = answer.result();
  if (!completion) throw new ProviderError('upstream', 'stream ended without a finish part');
  return completion;
}
