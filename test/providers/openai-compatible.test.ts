import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { collectCompletion } from '../../src/providers/completion-collector.js';
import {
  OpenAICompatibleProvider,
  type OpenAICompatibleSettings,
} from '../../src/providers/openai-compatible/index.js';
import { type GenerationRequest, ProviderError, type StreamPart } from '../../src/providers/types.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';

const request: GenerationRequest = {
  model: 'up-model',
  messages: [{ role: 'user', content: 'Say hello' }],
  maxTokens: 32,
  temperature: 0.2,
};

let upstream: MockUpstream;
const providers: OpenAICompatibleProvider[] = [];

function provider(settings: Partial<OpenAICompatibleSettings> = {}): OpenAICompatibleProvider {
  const created = new OpenAICompatibleProvider({
    baseUrl: upstream.url,
    model: 'up-model',
    retryBaseDelayMs: 5,
    apiKey: 'sk-test',
    ...settings,
  });
  providers.push(created);
  return created;
}

const never = (): AbortSignal => new AbortController().signal;

async function parts(iterable: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of iterable) out.push(part);
  return out;
}

before(async () => {
  upstream = await startMockUpstream();
});
beforeEach(() => upstream.reset());
after(async () => {
  await Promise.all(providers.map((p) => p.close()));
  await upstream.close();
});

describe('OpenAI-compatible provider', () => {
  it('non-stream: returns text and upstream usage, sends the mapped body and the API key', async () => {
    const completion = await provider().generate({ ...request, stop: ['\n'], seed: 7 }, never());
    assert.deepEqual(completion, {
      text: 'Hello from the mock upstream.',
      toolCalls: [],
      finishReason: 'stop',
      usage: { promptTokens: 12, completionTokens: 7 },
    });
    const [sent] = upstream.requests;
    assert.equal(sent?.headers.authorization, 'Bearer sk-test');
    assert.deepEqual(sent?.body, {
      model: 'up-model',
      messages: request.messages,
      max_tokens: 32,
      temperature: 0.2,
      seed: 7,
      stop: ['\n'],
      stream: false,
    });
  });

  it('stream: yields text deltas then finish with upstream usage (asks for include_usage)', async () => {
    const streamed = await parts(provider().stream(request, never()));
    const text = streamed.flatMap((part) => (part.type === 'text-delta' ? [part.text] : [])).join('');
    assert.equal(text, 'Hello from the mock upstream.');
    assert.deepEqual(streamed.at(-1), {
      type: 'finish',
      finishReason: 'stop',
      usage: { promptTokens: 12, completionTokens: 7 },
    });
    assert.ok(streamed.slice(0, -1).every((part) => part.type === 'text-delta'));
    const sent = upstream.requests[0]?.body as Record<string, unknown> | undefined;
    assert.deepEqual(sent?.stream_options, { include_usage: true });
  });

  it('stream: tool-call fragments split across chunks are passed on and reassemble', async () => {
    upstream.script({ kind: 'tool-call', name: 'get_weather', argumentChunks: ['{"ci', 'ty": "Os', 'lo"}'] });
    const tools = [{ type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const streamed = await parts(provider().stream({ ...request, tools, toolChoice: 'auto' }, never()));
    const deltas = streamed.filter((part) => part.type === 'tool-call-delta');
    assert.deepEqual(deltas[0], {
      type: 'tool-call-delta',
      index: 0,
      id: 'call_mock123',
      name: 'get_weather',
      argumentsDelta: '',
    });
    assert.equal(deltas.length, 4);
    const completion = await collectCompletion(
      (async function* () {
        yield* streamed;
      })(),
    );
    assert.deepEqual(completion.toolCalls, [
      { id: 'call_mock123', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Oslo"}' } },
    ]);
    assert.equal(completion.finishReason, 'tool_calls');
    const body = upstream.requests[0]?.body as Record<string, unknown>;
    assert.deepEqual(body.tools, tools);
    assert.equal(body.tool_choice, 'auto');
  });

  it('gives tool calls an id when the upstream sends none', async () => {
    const call = { kind: 'tool-call' as const, name: 'f', argumentChunks: ['{}'], id: null };
    upstream.script(call, call);
    const completion = await provider().generate(request, never());
    assert.match(completion.toolCalls[0]?.id ?? '', /^call_/);
    const streamed = await parts(provider().stream(request, never()));
    const first = streamed.find((part) => part.type === 'tool-call-delta');
    assert.match(first?.type === 'tool-call-delta' ? (first.id ?? '') : '', /^call_/);
  });

  it('estimates usage (chars/4) when the upstream reports none', async () => {
    upstream.script(
      { kind: 'answer', text: 'abcdefgh', usage: null },
      { kind: 'answer', text: 'abcdefgh', usage: null },
    );
    const completion = await provider().generate(request, never());
    // prompt: "Say hello" = 9 chars → 3 tokens + 4 framing; completion: 8 chars → 2 tokens
    assert.deepEqual(completion.usage, { promptTokens: 7, completionTokens: 2 });
    const streamed = await parts(provider().stream(request, never()));
    assert.deepEqual(streamed.at(-1), {
      type: 'finish',
      finishReason: 'stop',
      usage: { promptTokens: 7, completionTokens: 2 },
    });
  });

  it('retries a 429 (honouring Retry-After) and then succeeds', async () => {
    upstream.script({ kind: 'status', status: 429, retryAfter: '0.05' });
    const started = Date.now();
    const completion = await provider().generate(request, never());
    assert.equal(completion.text, 'Hello from the mock upstream.');
    assert.equal(upstream.requests.length, 2);
    assert.ok(Date.now() - started >= 45, 'waited for Retry-After');
  });

  it('does not wait for a Retry-After beyond the cap: fails at once, retryable, for the router to fall back', async () => {
    upstream.script({ kind: 'status', status: 429, retryAfter: '30' });
    await assert.rejects(provider({ maxRetryAfterMs: 1000 }).generate(request, never()), (err: unknown) => {
      return err instanceof ProviderError && err.status === 429 && err.retryable && err.retryAfterMs === 30_000;
    });
    assert.equal(upstream.requests.length, 1);
  });

  it('gives up after maxRetries on 5xx with a retryable upstream error', async () => {
    upstream.scriptModel('up-model', { kind: 'status', status: 500 });
    await assert.rejects(provider({ maxRetries: 2 }).generate(request, never()), (err: unknown) => {
      return err instanceof ProviderError && err.kind === 'upstream' && err.status === 500 && err.retryable;
    });
    assert.equal(upstream.requests.length, 3);
  });

  it('does not retry a 400 (bad-request, not retryable)', async () => {
    upstream.script({ kind: 'status', status: 400, body: { error: { message: 'max_tokens too large' } } });
    await assert.rejects(provider().generate(request, never()), (err: unknown) => {
      return (
        err instanceof ProviderError &&
        err.kind === 'bad-request' &&
        !err.retryable &&
        /max_tokens too large/.test(err.message)
      );
    });
    assert.equal(upstream.requests.length, 1);
  });

  it('turns a hanging upstream into a timeout error, without retrying it', async () => {
    upstream.script({ kind: 'hang' });
    const started = Date.now();
    await assert.rejects(
      provider({ timeoutMs: 150 }).generate(request, never()),
      (err: unknown) => err instanceof ProviderError && err.kind === 'timeout',
    );
    assert.ok(Date.now() - started < 1500);
    assert.equal(upstream.requests.length, 1);
  });

  it('retries connection failures, then reports a retryable upstream error', async () => {
    const dead = new OpenAICompatibleProvider({
      baseUrl: 'http://127.0.0.1:1/v1',
      model: 'x',
      maxRetries: 1,
      retryBaseDelayMs: 1,
    });
    providers.push(dead);
    await assert.rejects(
      dead.generate(request, never()),
      (err: unknown) =>
        err instanceof ProviderError && err.kind === 'upstream' && err.retryable && /ECONNREFUSED/.test(err.message),
    );
  });

  it('retries an upstream that drops the connection before answering, then reports a retryable error', async () => {
    upstream.script({ kind: 'disconnect' });
    upstream.script({ kind: 'disconnect' });
    await assert.rejects(
      provider({ maxRetries: 1 }).generate(request, never()),
      (err: unknown) => err instanceof ProviderError && err.kind === 'upstream' && err.retryable,
    );
    assert.equal(upstream.requests.length, 2);
  });

  it('aborting a non-streamed request closes the upstream connection (the mock sees the disconnect)', async () => {
    upstream.script({ kind: 'hang' });
    const controller = new AbortController();
    const answer = provider().generate(request, controller.signal);
    for (let waited = 0; upstream.requests.length === 0 && waited < 2000; waited += 5) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(upstream.requests.length, 1, 'the request reached the upstream');
    controller.abort();
    await assert.rejects(answer, { name: 'AbortError' });
    await upstream.waitForDisconnects(1);
    assert.equal(upstream.requests[0]?.clientDisconnected, true);
  });

  it('sends nothing upstream for a request already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(provider().generate(request, controller.signal), { name: 'AbortError' });
    assert.equal(upstream.requests.length, 0);
  });

  it('aborting mid-stream closes the upstream connection (the mock sees the disconnect)', async () => {
    upstream.script({ kind: 'slow', chunks: ['one ', 'two ', 'three ', 'four ', 'five '], delayMs: 100 });
    const controller = new AbortController();
    const received: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const part of provider().stream(request, controller.signal)) {
          if (part.type === 'text-delta') received.push(part.text);
          controller.abort();
        }
      })(),
      { name: 'AbortError' },
    );
    await upstream.waitForDisconnects(1);
    assert.deepEqual(received, ['one ']);
    assert.equal(upstream.requests[0]?.clientDisconnected, true);
  });

  it('a consumer that stops reading also closes the upstream connection', async () => {
    upstream.script({ kind: 'slow', chunks: ['a ', 'b ', 'c ', 'd '], delayMs: 80 });
    for await (const part of provider().stream(request, never())) {
      if (part.type === 'text-delta') break;
    }
    await upstream.waitForDisconnects(1);
  });

  it('never retries a stream after a part was yielded: a mid-stream failure becomes a final error part', async () => {
    upstream.script({ kind: 'disconnect', afterChunks: 2 });
    const streamed = await parts(provider().stream(request, never()));
    assert.deepEqual(
      streamed.slice(0, 2).map((part) => part.type),
      ['text-delta', 'text-delta'],
    );
    const last = streamed.at(-1);
    assert.ok(last?.type === 'error' && last.error.kind === 'upstream');
    assert.equal(upstream.requests.length, 1);
  });

  it('retries a stream that failed before anything was yielded', async () => {
    upstream.script({ kind: 'disconnect', afterChunks: 0 });
    const streamed = await parts(provider().stream(request, never()));
    assert.equal(streamed.at(-1)?.type, 'finish');
    assert.equal(upstream.requests.length, 2);
  });
});
