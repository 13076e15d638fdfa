import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AppError } from '../../src/errors/index.js';
import { createProviderFactories } from '../../src/providers/provider-factories.js';
import {
  createRouter,
  type FailedAttempt,
  type ProviderFactories,
  type RoutedRequest,
  type Router,
  type RouterOptions,
  type Target,
} from '../../src/providers/router.js';
import {
  type ChatProvider,
  type Completion,
  type GenerationRequest,
  ProviderError,
  type StreamPart,
} from '../../src/providers/types.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';

const request: RoutedRequest = { messages: [{ role: 'user', content: 'hi' }], temperature: 0 };
const never = (): AbortSignal => new AbortController().signal;

let upstream: MockUpstream;
const routers: Router[] = [];

function upstreamTarget(model: string, extra: Partial<Target> = {}): Target {
  return {
    provider: 'openai-compatible',
    model,
    baseUrl: upstream.url,
    maxRetries: 1,
    retryBaseDelayMs: 1,
    timeoutMs: 200,
    ...extra,
  } as Target;
}

function router(
  targetsByModel: Record<string, Target[]>,
  factories: ProviderFactories = createProviderFactories(),
  options: RouterOptions = {},
): Router {
  const created = createRouter(targetsByModel, factories, options);
  routers.push(created);
  return created;
}

async function parts(iterable: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of iterable) out.push(part);
  return out;
}

/** A stand-in provider failing (or answering) on demand, counting its calls. */
function fakeProvider(behaviour: () => Completion | ProviderError): ChatProvider & { calls: GenerationRequest[] } {
  const calls: GenerationRequest[] = [];
  return {
    id: 'fake',
    calls,
    async generate(req) {
      calls.push(req);
      const outcome = behaviour();
      if (outcome instanceof ProviderError) throw outcome;
      return outcome;
    },
    async *stream(req) {
      calls.push(req);
      const outcome = behaviour();
      if (outcome instanceof ProviderError) throw outcome;
      yield { type: 'finish', finishReason: outcome.finishReason, usage: outcome.usage };
    },
    async close() {},
  };
}

const okCompletion: Completion = {
  text: 'ok',
  toolCalls: [],
  finishReason: 'stop',
  usage: { promptTokens: 1, completionTokens: 1 },
};

function isAppError(code: AppError['code'], attempts?: number) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof AppError, `expected AppError, got ${String(err)}`);
    assert.equal(err.code, code);
    if (attempts !== undefined) assert.equal((err.details?.attempts as unknown[] | undefined)?.length, attempts);
    return true;
  };
}

before(async () => {
  upstream = await startMockUpstream();
});
beforeEach(() => upstream.reset());
after(async () => {
  await Promise.all(routers.map((r) => r.close()));
  await upstream.close();
});

describe('router', () => {
  it('500 x N on the first target (after its own retries) falls back to the second', async () => {
    upstream.scriptModel('flaky', { kind: 'status', status: 500 });
    const r = router({ pv: [upstreamTarget('flaky'), upstreamTarget('good')] });
    const completion = await r.generate('pv', request, never());
    assert.equal(completion.text, 'Hello from the mock upstream.');
    assert.deepEqual(
      upstream.requests.map((req) => req.model),
      ['flaky', 'flaky', 'good'],
    );
  });

  it('all targets failing → UPSTREAM_ERROR with every attempt in details', async () => {
    upstream.scriptModel('a', { kind: 'status', status: 503 });
    upstream.scriptModel('b', { kind: 'status', status: 500 });
    const logged: FailedAttempt[] = [];
    const r = router({ pv: [upstreamTarget('a'), upstreamTarget('b')] }, createProviderFactories(), {
      onAttemptFailed: (attempt) => logged.push(attempt),
    });
    await assert.rejects(r.generate('pv', request, never()), (err: unknown) => {
      isAppError('UPSTREAM_ERROR', 2)(err);
      // The tenant's view names the PV model, never the upstream's model name or address.
      const details = (err as AppError).details as { attempts: Array<{ model: string; status: number }> };
      assert.deepEqual(
        details.attempts.map((a) => [a.model, a.status]),
        [
          ['pv', 503],
          ['pv', 500],
        ],
      );
      const host = new URL(upstream.url).host;
      assert.ok(!JSON.stringify({ message: (err as AppError).message, details }).includes(host));
      return true;
    });
    // The server's log gets each attempt whole: the target's model and the upstream's own message.
    assert.deepEqual(
      logged.map((a) => [a.pvModel, a.model, a.status]),
      [
        ['pv', 'a', 503],
        ['pv', 'b', 500],
      ],
    );
    assert.ok(logged.every((a) => a.message.includes(new URL(upstream.url).host)));
  });

  it('a timeout as the last failure → UPSTREAM_TIMEOUT (and a timeout also falls back)', async () => {
    upstream.scriptModel('slow1', { kind: 'hang' });
    upstream.scriptModel('slow2', { kind: 'hang' });
    const r = router({
      pv: [upstreamTarget('slow1', { timeoutMs: 100 }), upstreamTarget('slow2', { timeoutMs: 100 })],
    });
    await assert.rejects(r.generate('pv', request, never()), isAppError('UPSTREAM_TIMEOUT', 2));
  });

  it('stream: falls back while nothing was yielded', async () => {
    upstream.scriptModel('down', { kind: 'status', status: 502 });
    const r = router({ pv: [upstreamTarget('down', { maxRetries: 0 }), upstreamTarget('up')] });
    const streamed = await parts(r.stream('pv', request, never()));
    assert.equal(streamed.at(-1)?.type, 'finish');
    assert.deepEqual(
      upstream.requests.map((req) => req.model),
      ['down', 'up'],
    );
  });

  it('stream: no fallback once a part was yielded (the failure arrives as an error part)', async () => {
    upstream.scriptModel('breaks', { kind: 'disconnect', afterChunks: 2 });
    const r = router({ pv: [upstreamTarget('breaks'), upstreamTarget('up')] });
    const streamed = await parts(r.stream('pv', request, never()));
    assert.equal(streamed.at(-1)?.type, 'error');
    assert.deepEqual(
      upstream.requests.map((req) => req.model),
      ['breaks'],
    );
  });

  it('stream: all targets failing before output → AppError thrown from the iterator', async () => {
    upstream.scriptModel('x', { kind: 'status', status: 500 });
    const r = router({ pv: [upstreamTarget('x', { maxRetries: 0 })] });
    await assert.rejects(parts(r.stream('pv', request, never())), isAppError('UPSTREAM_ERROR', 1));
  });

  it('a busy local engine → SERVER_BUSY with Retry-After (after trying the other targets)', async () => {
    const busy = fakeProvider(() => new ProviderError('busy', 'queue full'));
    const factories: ProviderFactories = { local: () => busy, 'openai-compatible': () => busy };
    const r = router({ pv: [{ provider: 'local', model: 'tiny', modelPath: '/x.gguf' }] }, factories);
    await assert.rejects(r.generate('pv', request, never()), (err: unknown) => {
      isAppError('SERVER_BUSY', 1)(err);
      assert.equal((err as AppError).headers['Retry-After'], '1');
      return true;
    });
  });

  it('a non-retryable failure stops routing (a malformed request → INVALID_PARAMETER)', async () => {
    const rejecting = fakeProvider(() => new ProviderError('bad-request', 'prompt too long'));
    const spare = fakeProvider(() => okCompletion);
    let created = 0;
    const factories: ProviderFactories = {
      local: () => (created++ === 0 ? rejecting : spare),
      'openai-compatible': () => spare,
    };
    const r = router(
      {
        pv: [
          { provider: 'local', model: 'a' },
          { provider: 'local', model: 'b' },
        ],
      },
      factories,
    );
    await assert.rejects(r.generate('pv', request, never()), isAppError('INVALID_PARAMETER', 1));
    assert.equal(spare.calls.length, 0);
  });

  it('fills in the target model and its maxTokens budget; a request maxTokens wins', async () => {
    const fake = fakeProvider(() => okCompletion);
    const factories: ProviderFactories = { local: () => fake, 'openai-compatible': () => fake };
    const r = router({ pv: [{ provider: 'local', model: 'tiny', maxTokens: 77 }] }, factories);
    await r.generate('pv', request, never());
    await r.generate('pv', { ...request, maxTokens: 5 }, never());
    assert.deepEqual(
      fake.calls.map((c) => [c.model, c.maxTokens]),
      [
        ['tiny', 77],
        ['tiny', 5],
      ],
    );
  });

  it('an aborted request is rethrown as the abort, never as an AppError nor a fallback', async () => {
    upstream.scriptModel('hangs', { kind: 'hang' });
    const r = router({ pv: [upstreamTarget('hangs', { timeoutMs: 5000 }), upstreamTarget('good')] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(r.generate('pv', request, controller.signal), { name: 'AbortError' });
    assert.deepEqual(
      upstream.requests.map((req) => req.model),
      ['hangs'],
    );
    await upstream.waitForDisconnects(1);
  });

  it('unknown PV model → INVALID_MODEL', async () => {
    const r = router({});
    await assert.rejects(r.generate('nope', request, never()), isAppError('INVALID_MODEL'));
  });

  it('PV models routed to the same GGUF share one local provider (the model loads once)', () => {
    const factories = createProviderFactories({ resolveLocalModelPath: (model) => `/models/${model}.gguf` });
    const a = factories.local({ provider: 'local', model: 'stories' });
    const b = factories.local({ provider: 'local', model: 'other-name', modelPath: '/models/stories.gguf' });
    const c = factories.local({ provider: 'local', model: 'different' });
    assert.equal(a, b);
    assert.notEqual(a, c);
  });
});
