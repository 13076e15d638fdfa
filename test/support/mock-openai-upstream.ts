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
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { chatHandler } from './mock-openai-upstream/chat.js';
import { embeddingsHandler } from './mock-openai-upstream/embeddings.js';
import type {
  MockBehaviour,
  MockState,
  MockUpstream,
  MockUpstreamOptions,
  RecordedRequest,
} from './mock-openai-upstream/types.js';
import { JSON_HEADERS } from './mock-openai-upstream/wire.js';

export type {
  MockBehaviour,
  MockUpstream,
  MockUpstreamOptions,
  MockUsage,
  RecordedRequest,
} from './mock-openai-upstream/types.js';
export { MOCK_EMBEDDING_DIMENSION } from './mock-openai-upstream/wire.js';

export async function startMockUpstream(options: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const record = options.record ?? true;
  const defaultText = options.defaultText ?? 'Hello from the mock upstream.';
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

  const state: MockState = { record, defaultText, queue, byModel, requests, later, noteDisconnect };
  const respond = chatHandler(state);
  const embeddings = embeddingsHandler(state);

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
