import type { Schema } from '../http/index.js';
import { type ModelId, randomHex128 } from '../kernel/index.js';
import type { Completion, FinishReason, StreamPart, Usage } from '../providers/index.js';
import type { Citation } from './context/index.js';

/** `chatcmpl-` + 32 random hex digits. */
export function newCompletionId(): string {
  return `chatcmpl-${randomHex128()}`;
}

export interface ResponseMeta {
  id: string;
  created: number;
  model: ModelId;
  memoryContext: { items_retrieved: number; retrieval_time_ms: number };
  citations: Citation[] | undefined;
}

function usageBody(usage: Usage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/**
 * The `chat.completion` object of a non-streamed answer. Optional fields are assigned in their place rather
 * than spread from conditional literals (a spread copies through V8's generic path, every answer).
 */
export function completionBody(meta: ResponseMeta, completion: Completion): Schema<'ChatCompletion'> {
  type Choice = Schema<'ChatCompletion'>['choices'][number];
  const message: Choice['message'] = { role: 'assistant', content: completion.text };
  if (completion.toolCalls.length > 0) message.tool_calls = completion.toolCalls;
  const body: Schema<'ChatCompletion'> = {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, finish_reason: completion.finishReason }],
    usage: usageBody(completion.usage),
    memory_context: meta.memoryContext,
  };
  if (meta.citations) body.citations = meta.citations;
  return body;
}

type Delta = Record<string, unknown>;

function chunk(meta: ResponseMeta, delta: Delta, finishReason: FinishReason | null = null) {
  return {
    id: meta.id,
    object: 'chat.completion.chunk' as const,
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/**
 * Turns stream parts into OpenAI `chat.completion.chunk` objects: role first, content and tool-call deltas as
 * they come, a chunk with the finish reason; then, only with `include_usage` (as OpenAI sends it), one with
 * empty `choices` carrying `usage`. pvai's own `memory_context` and `citations` ride on the last chunk: the
 * usage chunk when there is one, else the finish chunk, so a client's `chunk.choices[0]` never meets an empty
 * list it did not ask for.
 */
export class ChunkEncoder {
  readonly #meta: ResponseMeta;
  readonly #includeUsage: boolean;
  #started = false;

  constructor(meta: ResponseMeta, options: { includeUsage: boolean } = { includeUsage: true }) {
    this.#meta = meta;
    this.#includeUsage = options.includeUsage;
  }

  /** The chunks one part becomes (the first part is preceded by the role chunk). */
  encode(part: Exclude<StreamPart, { type: 'error' }>): object[] {
    const out: object[] = [];
    if (!this.#started) {
      this.#started = true;
      out.push(chunk(this.#meta, { role: 'assistant', content: '' }));
    }
    if (part.type === 'text-delta') {
      out.push(chunk(this.#meta, { content: part.text }));
    } else if (part.type === 'tool-call-delta') {
      const call: Record<string, unknown> = { index: part.index };
      if (part.id) call.id = part.id;
      if (part.id || part.name) call.type = 'function';
      call.function = { ...(part.name ? { name: part.name } : {}), arguments: part.argumentsDelta };
      out.push(chunk(this.#meta, { tool_calls: [call] }));
    } else {
      const extras = {
        ...(this.#meta.citations ? { citations: this.#meta.citations } : {}),
        memory_context: this.#meta.memoryContext,
      };
      if (!this.#includeUsage) {
        out.push({ ...chunk(this.#meta, {}, part.finishReason), ...extras });
        return out;
      }
      out.push(chunk(this.#meta, {}, part.finishReason));
      out.push({
        id: this.#meta.id,
        object: 'chat.completion.chunk',
        created: this.#meta.created,
        model: this.#meta.model,
        choices: [],
        usage: usageBody(part.usage),
        ...extras,
      });
    }
    return out;
  }
}

/** A cached answer as stream parts, so a cached stream replays as a stream. */
export function* replayAsParts(completion: Completion): Generator<Exclude<StreamPart, { type: 'error' }>> {
  if (completion.text) yield { type: 'text-delta', text: completion.text };
  for (const [index, call] of completion.toolCalls.entries()) {
    yield {
      type: 'tool-call-delta',
      index,
      id: call.id,
      name: call.function.name,
      argumentsDelta: call.function.arguments,
    };
  }
  yield { type: 'finish', finishReason: completion.finishReason, usage: completion.usage };
}
