import OpenAI from 'openai';
import { assertConformsToContract } from './contract.js';

/**
 * The official OpenAI SDK pointed at pvai's /z1, unmodified, with a fetch that also checks every
 * JSON response against the contract (streams are checked chunk by chunk by the tests).
 */
export function openaiClient(
  baseUrl: string,
  apiKey: string,
  options: { maxRetries?: number; onRequest?: (body: unknown) => void } = {},
): OpenAI {
  const checkingFetch: typeof fetch = async (input, init) => {
    // What the SDK put on the wire (e.g. the encoding_format it asks for when the caller gives none).
    if (options.onRequest && typeof init?.body === 'string') options.onRequest(JSON.parse(init.body));
    const res = await fetch(input, init);
    const type = res.headers.get('content-type') ?? '';
    if (type.startsWith('application/json')) {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      const body = await res.clone().json();
      await assertConformsToContract(init?.method ?? 'GET', url.pathname, res.status, res.headers, body);
    }
    return res;
  };
  return new OpenAI({ baseURL: `${baseUrl}/z1`, apiKey, fetch: checkingFetch, maxRetries: options.maxRetries ?? 0 });
}

/** pvai's required extension field; the SDK passes unknown body fields through. */
export type PvParams<T> = T & { user_id: string; skip_cache?: boolean; use_rag?: boolean };

/** A streamed chunk with pvai's extra fields (the SDK's types don't know memory_context). */
export interface Chunk {
  id: string;
  object: string;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: string;
      content?: string | null;
      tool_calls?: Array<{
        index: number;
        id?: string;
        type?: string;
        function?: { name?: string; arguments?: string };
      }>;
    };
    finish_reason: string | null;
  }>;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  memory_context?: { items_retrieved: number; retrieval_time_ms: number };
  status?: string;
  code?: string;
}

export async function collect(stream: AsyncIterable<unknown>): Promise<Chunk[]> {
  const chunks: Chunk[] = [];
  for await (const chunk of stream) chunks.push(chunk as Chunk);
  return chunks;
}

/** The text and tool calls a list of chunks adds up to. */
export function assemble(chunks: Chunk[]) {
  let text = '';
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  for (const chunk of chunks) {
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? '';
      for (const call of choice.delta.tool_calls ?? []) {
        const current = calls.get(call.index) ?? { id: '', name: '', arguments: '' };
        if (call.id) current.id = call.id;
        if (call.function?.name) current.name += call.function.name;
        current.arguments += call.function?.arguments ?? '';
        calls.set(call.index, current);
      }
    }
  }
  const finish = chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean);
  return { text, toolCalls: [...calls.values()], finishReasons: finish };
}
