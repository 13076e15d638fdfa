/**
 * A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions wire format, for tests and
 * benchmarks of anything that calls an OpenAI-compatible upstream.
 *
 *   const upstream = await startMockUpstream();
 *   upstream.script({ kind: 'status', status: 429, retryAfter: '0' });   // next request only
 *   upstream.scriptModel('broken', { kind: 'status', status: 500 });      // every request for that model
 *   … call `${upstream.url}/chat/completions` …
 *   upstream.requests[0].body; upstream.disconnects; await upstream.close();
 *
 * Which behaviour answers a request: the requested model's scripted behaviour if any, else the next
 * queued one, else the default answer (precomputed bytes, so benchmarks measure the caller, not this).
 * Every behaviour answers in JSON or SSE (`chat.completion.chunk` … `data: [DONE]`) following the
 * request's `stream` flag; usage is sent on streams only when `stream_options.include_usage` is set.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface MockUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export type MockBehaviour =
  /** A normal answer; streamed as one chunk per word. `usage: null` omits usage. */
  | { kind: 'answer'; text?: string; finishReason?: string; usage?: MockUsage | null }
  /** A tool call whose arguments arrive split across chunks exactly as given (joined when not streaming). `id: null` omits the id. */
  | { kind: 'tool-call'; name: string; argumentChunks: string[]; id?: string | null; usage?: MockUsage | null }
  /** Streams `chunks` with `delayMs` before each; not streaming: waits `delayMs` × chunks, then answers. */
  | { kind: 'slow'; chunks: string[]; delayMs: number }
  /** An error status, e.g. 429 with Retry-After, or 500. */
  | { kind: 'status'; status: number; retryAfter?: string; body?: unknown }
  /** Reads the request and never answers. */
  | { kind: 'hang' }
  /** Streams `afterChunks` content chunks (default 2), then destroys the socket without finishing. */
  | { kind: 'disconnect'; afterChunks?: number }
  /**
   * Streams content chunks of `chunkChars` characters (default 16,384) for as long as its client takes
   * them, waiting for 'drain' when its buffer is full; never finishes. Not streaming: never answers.
   */
  | { kind: 'endless'; chunkChars?: number };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  model: string | undefined;
  stream: boolean;
  behaviour: MockBehaviour['kind'];
  receivedAt: number;
  /** The client closed the connection before the answer was complete. */
  clientDisconnected: boolean;
  disconnectedAt?: number;
}

export interface MockUpstream {
  /** Base URL including `/v1` (what an OpenAI client calls `baseURL`). */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests whose client went away before the answer was complete. */
  readonly disconnects: number;
  /** Queues behaviours, one per coming request. */
  script(...behaviours: MockBehaviour[]): void;
  /** Answers every request for `model` this way (undefined clears it). */
  scriptModel(model: string, behaviour: MockBehaviour | undefined): void;
  /** Resolves once `count` disconnects have been seen in total. */
  waitForDisconnects(count?: number, timeoutMs?: number): Promise<void>;
  /** Clears queue, model scripts, records and the disconnect count. */
  reset(): void;
  close(): Promise<void>;
}

export interface MockUpstreamOptions {
  /** Keep `requests` (default true; benchmarks turn it off to keep memory flat). */
  record?: boolean;
  /** Text of the default answer. */
  defaultText?: string;
}

const MODEL = 'mock-model';
const DEFAULT_USAGE: MockUsage = { prompt_tokens: 12, completion_tokens: 7 };

function completionBody(
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

function chunkEvent(delta: Record<string, unknown>, finishReason: string | null = null): string {
  const chunk = {
    id: 'chatcmpl-mock',
    object: 'chat.completion.chunk',
    created: 0,
    model: MODEL,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

function usageEvent(usage: MockUsage): string {
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
function textEvents(text: string, finishReason: string, usage: MockUsage | null): string[] {
  const words = text.match(/\S+\s*/g) ?? [];
  return [
    chunkEvent({ role: 'assistant', content: '' }),
    ...words.map((word) => chunkEvent({ content: word })),
    chunkEvent({}, finishReason),
    ...(usage ? [usageEvent(usage)] : []),
    'data: [DONE]\n\n',
  ];
}

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
const JSON_HEADERS = { 'content-type': 'application/json' };

/** Dimension of the mock's embeddings: a hashed bag of words, so texts sharing words are close. */
export const MOCK_EMBEDDING_DIMENSION = 64;

function mockEmbedding(text: string): number[] {
  const vector = new Array<number>(MOCK_EMBEDDING_DIMENSION).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (const ch of word) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
    vector[(h >>> 0) % MOCK_EMBEDDING_DIMENSION] = (vector[(h >>> 0) % MOCK_EMBEDDING_DIMENSION] ?? 0) + 1;
  }
  return vector;
}

export async function startMockUpstream(options: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const record = options.record ?? true;
  const defaultText = options.defaultText ?? 'Hello from the mock upstream.';
  // Precomputed default answers: the hot path of a benchmark only writes these bytes.
  const defaultJson = Buffer.from(completionBody(defaultText, undefined, 'stop', DEFAULT_USAGE));
  const defaultSse = Buffer.from(textEvents(defaultText, 'stop', null).join(''));
  const defaultSseWithUsage = Buffer.from(textEvents(defaultText, 'stop', DEFAULT_USAGE).join(''));

  const queue: MockBehaviour[] = [];
  const byModel = new Map<string, MockBehaviour>();
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let disconnects = 0;
  let disconnectWaiters: Array<{ count: number; resolve: () => void }> = [];

  const later = (ms: number, fn: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };

  function noteDisconnect(rec: RecordedRequest | undefined): void {
    disconnects++;
    if (rec) {
      rec.clientDisconnected = true;
      rec.disconnectedAt = Date.now();
    }
    const ready = disconnectWaiters.filter((waiter) => disconnects >= waiter.count);
    disconnectWaiters = disconnectWaiters.filter((waiter) => disconnects < waiter.count);
    for (const waiter of ready) waiter.resolve();
  }

  function respond(req: IncomingMessage, res: ServerResponse, rawBody: string): void {
    let body: unknown;
    try {
      body = JSON.parse(rawBody);
    } catch {
      res
        .writeHead(400, JSON_HEADERS)
        .end(JSON.stringify({ error: { message: 'invalid JSON body', type: 'invalid_request_error' } }));
      return;
    }
    const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const model = typeof fields.model === 'string' ? fields.model : undefined;
    const stream = fields.stream === true;
    const streamOptions = fields.stream_options as { include_usage?: unknown } | undefined;
    const includeUsage = stream && streamOptions?.include_usage === true;
    const behaviour = (model !== undefined ? byModel.get(model) : undefined) ?? queue.shift();

    const rec: RecordedRequest | undefined = record
      ? {
          method: req.method ?? 'POST',
          path: req.url ?? '',
          headers: req.headers,
          body,
          model,
          stream,
          behaviour: behaviour?.kind ?? 'answer',
          receivedAt: Date.now(),
          clientDisconnected: false,
        }
      : undefined;
    if (rec) requests.push(rec);

    let selfDestroyed = false;
    res.on('close', () => {
      if (!res.writableFinished && !selfDestroyed) noteDisconnect(rec);
    });

    if (!behaviour) {
      if (!stream) res.writeHead(200, JSON_HEADERS).end(defaultJson);
      else res.writeHead(200, SSE_HEADERS).end(includeUsage ? defaultSseWithUsage : defaultSse);
      return;
    }

    const writeEvents = (events: string[], delayMs: number, onDone: () => void): void => {
      const next = (index: number): void => {
        if (res.destroyed) return;
        if (index >= events.length) {
          onDone();
          return;
        }
        res.write(events[index]);
        if (delayMs > 0) later(delayMs, () => next(index + 1));
        else next(index + 1);
      };
      if (delayMs > 0) later(delayMs, () => next(0));
      else next(0);
    };

    switch (behaviour.kind) {
      case 'hang':
        return; // the request is read; the answer never comes
      case 'status': {
        const headers = {
          ...JSON_HEADERS,
          ...(behaviour.retryAfter !== undefined ? { 'retry-after': behaviour.retryAfter } : {}),
        };
        const errorBody = behaviour.body ?? {
          error: { message: `mock status ${behaviour.status}`, type: 'mock_error' },
        };
        res.writeHead(behaviour.status, headers).end(JSON.stringify(errorBody));
        return;
      }
      case 'answer': {
        const text = behaviour.text ?? defaultText;
        const usage = behaviour.usage === undefined ? DEFAULT_USAGE : behaviour.usage;
        const finishReason = behaviour.finishReason ?? 'stop';
        if (!stream) res.writeHead(200, JSON_HEADERS).end(completionBody(text, undefined, finishReason, usage));
        else res.writeHead(200, SSE_HEADERS).end(textEvents(text, finishReason, includeUsage ? usage : null).join(''));
        return;
      }
      case 'tool-call': {
        const idField = behaviour.id === null ? {} : { id: behaviour.id ?? 'call_mock123' };
        const usage = behaviour.usage === undefined ? DEFAULT_USAGE : behaviour.usage;
        if (!stream) {
          const call = {
            ...idField,
            type: 'function',
            function: { name: behaviour.name, arguments: behaviour.argumentChunks.join('') },
          };
          res.writeHead(200, JSON_HEADERS).end(completionBody(null, [call], 'tool_calls', usage));
          return;
        }
        const events = [
          chunkEvent({
            role: 'assistant',
            content: null,
            tool_calls: [{ index: 0, ...idField, type: 'function', function: { name: behaviour.name, arguments: '' } }],
          }),
          ...behaviour.argumentChunks.map((fragment) =>
            chunkEvent({ tool_calls: [{ index: 0, function: { arguments: fragment } }] }),
          ),
          chunkEvent({}, 'tool_calls'),
          ...(includeUsage && usage ? [usageEvent(usage)] : []),
          'data: [DONE]\n\n',
        ];
        res.writeHead(200, SSE_HEADERS).end(events.join(''));
        return;
      }
      case 'slow': {
        const text = behaviour.chunks.join('');
        if (!stream) {
          later(behaviour.delayMs * behaviour.chunks.length, () => {
            if (!res.destroyed)
              res.writeHead(200, JSON_HEADERS).end(completionBody(text, undefined, 'stop', DEFAULT_USAGE));
          });
          return;
        }
        res.writeHead(200, SSE_HEADERS);
        res.flushHeaders();
        const events = [
          ...behaviour.chunks.map((content) => chunkEvent({ content })),
          chunkEvent({}, 'stop'),
          ...(includeUsage ? [usageEvent(DEFAULT_USAGE)] : []),
          'data: [DONE]\n\n',
        ];
        writeEvents(events, behaviour.delayMs, () => res.end());
        return;
      }
      case 'endless': {
        if (!stream) return;
        res.writeHead(200, SSE_HEADERS);
        const event = chunkEvent({ content: 'x'.repeat(behaviour.chunkChars ?? 16_384) });
        const pump = (): void => {
          while (!res.destroyed && res.write(event));
          if (!res.destroyed) res.once('drain', pump);
        };
        res.write(chunkEvent({ role: 'assistant', content: '' }));
        pump();
        return;
      }
      case 'disconnect': {
        const destroy = (): void => {
          selfDestroyed = true;
          res.socket?.destroy();
        };
        if (!stream) {
          destroy();
          return;
        }
        res.writeHead(200, SSE_HEADERS);
        const count = behaviour.afterChunks ?? 2;
        const events = [
          chunkEvent({ role: 'assistant', content: '' }),
          ...Array.from({ length: count }, (_, i) => chunkEvent({ content: `part${i} ` })),
        ];
        writeEvents(events, 0, () => later(20, destroy)); // let the chunks reach the client first
        return;
      }
    }
  }

  /** POST /embeddings as OpenAI answers it (inputs in reverse order, so clients must sort by index). */
  function embeddings(req: IncomingMessage, res: ServerResponse, raw: string): void {
    let body: { model?: string; input?: string | string[] };
    try {
      body = JSON.parse(raw) as typeof body;
    } catch {
      res.writeHead(400, JSON_HEADERS).end(JSON.stringify({ error: { message: 'invalid JSON body' } }));
      return;
    }
    const inputs = typeof body.input === 'string' ? [body.input] : (body.input ?? []);
    // A model scripted with an error status answers its embeddings with it too (an embedding upstream down).
    const scripted = body.model !== undefined ? byModel.get(body.model) : undefined;
    if (scripted?.kind === 'status') {
      res
        .writeHead(scripted.status, JSON_HEADERS)
        .end(
          JSON.stringify(scripted.body ?? { error: { message: `scripted ${scripted.status}`, type: 'server_error' } }),
        );
      return;
    }
    // A model scripted as slow answers each embeddings request after `delayMs`: ingestion that takes at least
    // that long per batch however fast the machine is, for tests of what happens while a document is embedded.
    if (scripted?.kind === 'slow') {
      const timer = setTimeout(() => answerEmbeddings(req, res, body, inputs), scripted.delayMs);
      res.once('close', () => clearTimeout(timer));
      return;
    }
    answerEmbeddings(req, res, body, inputs);
  }

  function answerEmbeddings(
    req: IncomingMessage,
    res: ServerResponse,
    body: { model?: string },
    inputs: readonly string[],
  ): void {
    if (record) {
      requests.push({
        method: 'POST',
        path: req.url ?? '',
        headers: req.headers,
        body,
        model: body.model,
        stream: false,
        behaviour: 'answer',
        receivedAt: Date.now(),
        clientDisconnected: false,
      });
    }
    const data = inputs.map((text, index) => ({ object: 'embedding', index, embedding: mockEmbedding(text) }));
    res.writeHead(200, JSON_HEADERS).end(
      JSON.stringify({
        object: 'list',
        data: data.reverse(),
        model: body.model ?? MODEL,
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      }),
    );
  }

  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url?.endsWith('/embeddings')) {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => embeddings(req, res, Buffer.concat(chunks).toString('utf8')));
      return;
    }
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res
        .writeHead(404, JSON_HEADERS)
        .end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => respond(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    get disconnects() {
      return disconnects;
    },
    script(...behaviours) {
      queue.push(...behaviours);
    },
    scriptModel(model, behaviour) {
      if (behaviour) byModel.set(model, behaviour);
      else byModel.delete(model);
    },
    waitForDisconnects(count = 1, timeoutMs = 2_000) {
      if (disconnects >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`expected ${count} disconnects, saw ${disconnects}`)),
          timeoutMs,
        );
        disconnectWaiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
    reset() {
      queue.length = 0;
      byModel.clear();
      requests.length = 0;
      disconnects = 0;
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The system messages pvai sent upstream in the last request the mock recorded, joined by newlines. */
export function systemPrompt(upstream: MockUpstream): string {
  const body = upstream.requests.at(-1)?.body as { messages: Array<{ role: string; content: string }> };
  return body.messages
    .filter((m) => m.role === 'system')
    .map((m) => m.content)
    .join('\n');
}
