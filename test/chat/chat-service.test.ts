import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ContextSource } from '../../src/chat/index.js';
import { AppError } from '../../src/errors/index.js';
import { ProviderError, type StreamPart } from '../../src/providers/index.js';
import { baseRequest, drain, harness, isCode, live, principal } from './chat-service-harness.js';

describe('ChatService: charge, route, refund, cache', () => {
  it('a miss charges the price once and is cached; the same request then hits for 0 credits', async () => {
    const h = harness();
    const first = await h.service.complete(principal, baseRequest, live());
    assert.equal(first.cache, 'MISS');
    assert.equal(first.credits, 2);
    assert.equal(h.credits.balance, 98);
    const second = await h.service.complete(principal, baseRequest, live());
    assert.equal(second.cache, 'HIT');
    assert.equal(second.credits, 0);
    assert.equal(second.completion.text, 'Forty-two boxes.');
    assert.equal(h.calls.length, 1, 'the hit never reached the router');
    assert.equal(h.credits.balance, 98);
  });

  it('skip_cache neither reads nor writes the cache', async () => {
    const h = harness();
    const request = { ...baseRequest, skip_cache: true };
    assert.equal((await h.service.complete(principal, request, live())).cache, 'BYPASS');
    assert.equal((await h.service.complete(principal, baseRequest, live())).cache, 'MISS');
    assert.equal(h.calls.length, 2);
  });

  it('an upstream failure is refunded and becomes its product error (timeout → UPSTREAM_TIMEOUT)', async () => {
    const h = harness({ generate: async () => Promise.reject(new ProviderError('timeout', 'slow')) });
    await assert.rejects(h.service.complete(principal, baseRequest, live()), isCode('UPSTREAM_TIMEOUT'));
    assert.deepEqual([h.credits.balance, h.credits.charges, h.credits.refunds], [100, 1, 1]);
  });

  it('a busy engine is 503 SERVER_BUSY with Retry-After, refunded', async () => {
    const h = harness({ generate: async () => Promise.reject(new ProviderError('busy', 'full')) });
    await assert.rejects(h.service.complete(principal, baseRequest, live()), (err: unknown) => {
      assert.ok(err instanceof AppError && err.code === 'SERVER_BUSY');
      assert.equal(err.headers['Retry-After'], '1');
      return true;
    });
    assert.equal(h.credits.balance, 100);
  });

  it('a client that left gets the abort reason back, not a product error, and is refunded', async () => {
    const controller = new AbortController();
    const reason = new Error('client left');
    const h = harness({
      generate: async () => {
        controller.abort(reason);
        throw new ProviderError('upstream', 'aborted');
      },
    });
    await assert.rejects(h.service.complete(principal, baseRequest, controller.signal), (err) => err === reason);
    assert.equal(h.credits.balance, 100);
  });

  it('a context source that throws is refunded and the error goes up unchanged', async () => {
    const broken: ContextSource = {
      name: 'memory',
      applies: () => true,
      version: async () => undefined,
      contribute: async () => Promise.reject(new TypeError('defect')),
    };
    const h = harness({}, [broken]);
    await assert.rejects(h.service.complete(principal, baseRequest, live()), TypeError);
    assert.equal(h.credits.balance, 100);
    assert.equal(h.calls.length, 0);
  });

  it('too few credits: 402 INSUFFICIENT_CREDITS with required and balance, and nothing is routed', async () => {
    const h = harness({}, [], { price: 5, balance: 3 });
    await assert.rejects(h.service.complete(principal, baseRequest, live()), (err: unknown) => {
      assert.ok(err instanceof AppError && err.code === 'INSUFFICIENT_CREDITS');
      assert.deepEqual(err.details, { required: 5, balance: 3 });
      return true;
    });
    assert.equal(h.calls.length, 0);
  });

  it('a model that cannot be served is 503 before anything is charged', async () => {
    const h = harness();
    await assert.rejects(
      h.service.complete(principal, { ...baseRequest, model: 'PV-CODEX' }, live()),
      isCode('SERVICE_UNAVAILABLE'),
    );
    assert.equal(h.credits.charges, 0);
  });
});

describe('ChatService: streams', () => {
  it('a finished stream is charged, relayed part by part and cached for a later JSON request', async () => {
    const h = harness();
    const streamed = await h.service.stream(principal, baseRequest, live());
    const parts = await drain(streamed.parts);
    assert.deepEqual(
      parts.map((p) => p.type),
      ['text-delta', 'text-delta', 'finish'],
    );
    assert.equal(h.streamReturned(), 1, 'the provider stream is closed');
    const again = await h.service.complete(principal, baseRequest, live());
    assert.equal(again.cache, 'HIT');
    assert.equal(again.completion.text, 'Forty-two boxes.');
    assert.equal(h.credits.balance, 98);
  });

  it('a failure before the first part throws, refunded, with the product error', async () => {
    const h = harness({
      // biome-ignore lint/correctness/useYield: fails before its first part
      stream: async function* () {
        throw new ProviderError('upstream', 'refused');
      },
    });
    await assert.rejects(h.service.stream(principal, baseRequest, live()), isCode('UPSTREAM_ERROR'));
    assert.equal(h.credits.balance, 100);
  });

  it('an error part as the first part is a failure before the start too', async () => {
    const h = harness({
      stream: async function* () {
        yield { type: 'error', error: new ProviderError('timeout', 'late') } as StreamPart;
      },
    });
    await assert.rejects(h.service.stream(principal, baseRequest, live()), isCode('UPSTREAM_TIMEOUT'));
    assert.equal(h.credits.balance, 100);
  });

  it('a failure after the start is a failed part; the request stays charged and nothing is cached', async () => {
    const h = harness({
      stream: async function* () {
        yield { type: 'text-delta', text: 'Forty' } as StreamPart;
        yield { type: 'error', error: new ProviderError('upstream', 'cut off') } as StreamPart;
      },
    });
    const parts = await drain((await h.service.stream(principal, baseRequest, live())).parts);
    const last = parts.at(-1);
    assert.ok(last?.type === 'failed' && last.error.code === 'UPSTREAM_ERROR');
    assert.equal(h.credits.balance, 98);
    assert.equal((await h.service.complete(principal, baseRequest, live())).cache, 'MISS');
  });

  it('a stream that ends without a finish part ends with a failed part', async () => {
    const h = harness({
      stream: async function* () {
        yield { type: 'text-delta', text: 'Forty' } as StreamPart;
      },
    });
    const parts = await drain((await h.service.stream(principal, baseRequest, live())).parts);
    assert.equal(parts.at(-1)?.type, 'failed');
  });

  it('a reader that stops early closes the provider stream; it stays charged and is not cached', async () => {
    const h = harness();
    const streamed = await h.service.stream(principal, baseRequest, live());
    await streamed.parts.next();
    await streamed.parts.return();
    assert.equal(h.streamReturned(), 1);
    assert.equal(h.credits.balance, 98);
    assert.equal((await h.service.complete(principal, baseRequest, live())).cache, 'MISS');
  });
});
