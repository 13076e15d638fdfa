/**
 * Concurrent streaming chats against any OpenAI-compatible `/chat/completions` (pvai's `/z1/chat/completions` or
 * llama-server's `/v1/chat/completions`), timed from outside: aggregate output tokens/s, time to first token and
 * the gaps between streamed pieces. The same prompts go to both servers, so the two rows differ by server alone.
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { percentile } from './lib.js';

/** One streamed answer, timed. */
interface StreamTiming {
  /** ms from sending the request to the first content piece. */
  ttft: number;
  /** ms between consecutive content pieces. */
  gaps: number[];
  /** Output tokens, as the server's usage counts them. */
  tokens: number;
  /** ms from sending to the stream's end. */
  total: number;
}

export interface LevelResult {
  streams: number;
  /** Output tokens of every stream over the wall time of the level. */
  tokensPerSecond: number;
  ttftP50: number;
  ttftP95: number;
  gapP95: number;
  /** Tokens per stream, mean (a model may end an answer before its limit). */
  meanTokens: number;
  /** Requests not answered 200 (e.g. 503 from a full queue). */
  refused: number;
}

export interface StreamTarget {
  url: string;
  headers: Record<string, string>;
  /** The body's fields other than messages and stream (model, max_tokens, user_id, ...). */
  body: Record<string, unknown>;
}

/** The value at fraction `p` of `xs` in any order. */
const percentileOf = (xs: readonly number[], p: number): number =>
  percentile(
    [...xs].sort((a, b) => a - b),
    p,
  );

/** A system prompt every request shares (as an application's would), then a ~250-token document to answer about. */
const SYSTEM =
  'You are a careful assistant for an engineering library. Answer in plain prose, cite nothing you were not ' +
  'given, and write at least three paragraphs about the document the user gives.';

const WORDS = (
  'aerodynamic boundary layer transition pressure gradient supersonic flow wing surface heat transfer shock ' +
  'wave laminar turbulent velocity profile experiment tunnel model measured predicted theory compressible ' +
  'viscous separation reattachment nozzle cylinder plate cone stagnation point skin friction coefficient'
).split(' ');

/** A deterministic ~250-token document for stream `i` (each stream its own, so no two prompts are identical). */
function documentFor(i: number): string {
  let seed = 2654435761 * (i + 1);
  const next = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed;
  };
  const sentences: string[] = [];
  for (let s = 0; s < 18; s++) {
    const words = Array.from({ length: 9 }, () => WORDS[next() % WORDS.length]);
    sentences.push(`${words.join(' ')}.`);
  }
  return sentences.join(' ');
}

export function messagesFor(i: number): Array<{ role: string; content: string }> {
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `Document ${i + 1}:\n${documentFor(i)}\n\nExplain what this document is about.` },
  ];
}

async function oneStream(target: StreamTarget, dispatcher: Agent, i: number): Promise<StreamTiming | undefined> {
  const started = performance.now();
  const res = await request(target.url, {
    dispatcher,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...target.headers },
    body: JSON.stringify({
      ...target.body,
      // Each request an end user of its own (memory and documents are per user), as eight users at once would be.
      ...(typeof target.body.user_id === 'string' ? { user_id: `${target.body.user_id}-${i}` } : {}),
      messages: messagesFor(i),
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  if (res.statusCode !== 200) {
    await res.body.text();
    return undefined;
  }
  let buffer = '';
  let last = 0;
  let ttft = 0;
  let tokens = 0;
  const gaps: number[] = [];
  for await (const chunk of res.body) {
    buffer += chunk.toString();
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      const data = event.split('\n').find((line) => line.startsWith('data: '));
      if (!data || data === 'data: [DONE]') continue;
      const parsed = JSON.parse(data.slice(6)) as {
        choices?: Array<{ delta?: { content?: string } }>;
        usage?: { completion_tokens?: number };
      };
      if (parsed.usage?.completion_tokens !== undefined) tokens = parsed.usage.completion_tokens;
      if (!parsed.choices?.[0]?.delta?.content) continue;
      const now = performance.now();
      if (ttft === 0) ttft = now - started;
      else gaps.push(now - last);
      last = now;
    }
  }
  return { ttft, gaps, tokens, total: performance.now() - started };
}

/** `streams` chats sent at once (request `offset + k` for k < streams); answers when every one has ended. */
export async function runLevel(target: StreamTarget, streams: number, offset = 0): Promise<LevelResult> {
  const dispatcher = new Agent({ connections: streams, bodyTimeout: 600_000, headersTimeout: 600_000 });
  try {
    const started = performance.now();
    const timings = await Promise.all(
      Array.from({ length: streams }, (_, k) => oneStream(target, dispatcher, offset + k)),
    );
    const wall = performance.now() - started;
    const answered = timings.filter((t): t is StreamTiming => t !== undefined);
    const tokens = answered.reduce((n, t) => n + t.tokens, 0);
    return {
      streams,
      tokensPerSecond: (tokens / wall) * 1000,
      ttftP50: percentileOf(
        answered.map((t) => t.ttft),
        0.5,
      ),
      ttftP95: percentileOf(
        answered.map((t) => t.ttft),
        0.95,
      ),
      gapP95: percentileOf(
        answered.flatMap((t) => t.gaps),
        0.95,
      ),
      meanTokens: answered.length === 0 ? 0 : tokens / answered.length,
      refused: streams - answered.length,
    };
  } finally {
    await dispatcher.close();
  }
}
