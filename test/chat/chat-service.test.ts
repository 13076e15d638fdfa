import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryCache } from '../../src/cache/index.js';
import {
  type AnswerPart,
  assembleContext,
  type ChatCompletionRequest,
  ChatService,
  type ContextContribution,
  ContextRegistry,
  type ContextSource,
  estimateTokens,
} from '../../src/chat/index.js';
import { AppError } from '../../src/errors/index.js';
import type { Principal } from '../../src/kernel/index.js';
import { type Completion, ProviderError, type RoutedRequest, type StreamPart } from '../../src/providers/index.js';

const principal: Principal = {
  account: { id: 'acct_1', email: 'a@example.com', tier: 'startup', credits: 100, createdAt: 0 },
  key: {
    id: 'key_1',
    accountId: 'acct_1',
    prefix: 'pv_sk_abc',
    name: null,
    userId: null,
    createdAt: 0,
    lastUsedAt: 0,
    revokedAt: null,
  },
};

const baseRequest: ChatCompletionRequest = {
  model: 'PV-STANDARD',
  user_id: 'user-1',
  messages: [{ role: 'user', content: 'What is in the warehouse?' }],
};

const answer: Completion = {
  text: 'Forty-two boxes.',
  toolCalls: [],
  finishReason: 'stop',
  usage: { promptTokens: 9, completionTokens: 4 },
};

const finishParts: StreamPart[] = [
  { type: 'text-delta', text: 'Forty-two ' },
  { type: 'text-delta', text: 'boxes.' },
  { type: 'finish', finishReason: 'stop', usage: { promptTokens: 9, completionTokens: 4 } },
];

type Script = { generate?: () => Promise<Completion>; stream?: () => AsyncIterable<StreamPart> };

/** A scripted router, a real in-process cache, and a credit account that counts what it was asked. */
function harness(
  script: Script = {},
  sources: ContextSource[] = [],
  options: { price?: number; balance?: number } = {},
) {
  const calls: RoutedRequest[] = [];
  const credits = { balance: options.balance ?? 100, charges: 0, refunds: 0 };
  let streamReturned = 0;
  const service = new ChatService({
    router: {
      async generate(_model, request) {
        calls.push(request);
        return (script.generate ?? (async () => answer))();
      },
      stream(_model, request) {
        calls.push(request);
        const inner = (
          script.stream ??
          async function* () {
            yield* finishParts;
          }
        )()[Symbol.asyncIterator]();
        return {
          [Symbol.asyncIterator]: () => ({
            next: () => inner.next(),
            async return() {
              streamReturned += 1;
              await inner.return?.();
              return { done: true as const, value: undefined };
            },
          }),
        };
      },
    },
    cache: createMemoryCache({ maxBytes: 1 << 20 }),
    credits: {
      async charge(_account, amount) {
        if (credits.balance < amount) return { ok: false, balance: credits.balance };
        credits.balance -= amount;
        credits.charges += 1;
        return { ok: true, balance: credits.balance };
      },
      async refund(_account, amount) {
        credits.balance += amount;
        credits.refunds += 1;
      },
    },
    context: new ContextRegistry(sources),
    clock: () => 1_800_000_000_000,
    cacheTtlMs: 60_000,
    price: () => options.price ?? 2,
    budget: () => ({ contextTokens: 4096, answerTokens: 512 }),
    unavailableReason: (model) => (model === 'PV-CODEX' ? 'no model file' : undefined),
  });
  return { service, calls, credits, streamReturned: () => streamReturned };
}

const live = () => new AbortController().signal;

async function drain(parts: AsyncGenerator<AnswerPart, void, undefined>): Promise<AnswerPart[]> {
  const out: AnswerPart[] = [];
  for await (const part of parts) out.push(part);
  return out;
}

function source(
  name: string,
  contribution: ContextContribution,
  version?: () => string | undefined,
): ContextSource & {
  contributed: number;
} {
  const s = {
    name,
    contributed: 0,
    applies: (request: ChatCompletionRequest) => request.use_rag === true || name === 'memory',
    version: async () => version?.(),
    async contribute() {
      s.contributed += 1;
      return contribution;
    },
  };
  return s;
}

const isCode = (code: string) => (err: unknown) => err instanceof AppError && err.code === code;

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

describe('ChatService: context sources', () => {
  const passage = (n: number, text = `Passage ${n} says the warehouse holds ${n} boxes.`) => ({
    text,
    citation: {
      source: 'document' as const,
      title: `Doc ${n}`,
      snippet: text.slice(0, 20),
      score: 1 / n,
      document_id: `doc_${n}`,
    },
  });

  it('passages become numbered sources in one system message, citations numbered to match', async () => {
    const rag = source('rag', { passages: [passage(1), passage(2)] });
    const memory = source('memory', { notes: ['The user prefers metric units.'], itemsRetrieved: 1 });
    const h = harness({}, [memory, rag]);
    const result = await h.service.complete(principal, { ...baseRequest, use_rag: true }, live());
    const system = h.calls[0]?.messages.filter((m) => m.role === 'system').map((m) => String(m.content)) ?? [];
    assert.equal(system.length, 2);
    assert.match(system[0] ?? '', /metric units/);
    assert.match(system[1] ?? '', /\[1\] Doc 1\nPassage 1[\s\S]*\[2\] Doc 2\nPassage 2/);
    assert.deepEqual(
      result.meta.citations?.map((c) => [c.index, c.document_id]),
      [
        [1, 'doc_1'],
        [2, 'doc_2'],
      ],
    );
    assert.equal(result.meta.memoryContext.items_retrieved, 1);
    assert.equal(h.calls[0]?.messages.at(-1)?.content, 'What is in the warehouse?', 'the conversation follows');
  });

  it("a source's version is part of the cache key: a new version misses, the same one hits", async () => {
    let version = 'v1';
    const memory = source('memory', { notes: ['fact'] }, () => version);
    const h = harness({}, [memory]);
    assert.equal((await h.service.complete(principal, baseRequest, live())).cache, 'MISS');
    assert.equal((await h.service.complete(principal, baseRequest, live())).cache, 'HIT');
    version = 'v2';
    assert.equal((await h.service.complete(principal, baseRequest, live())).cache, 'MISS');
  });

  it('with a personal source, two users of one account never share a cached answer', async () => {
    const memory = source('memory', { notes: ['fact'] }, () => 'v1');
    const h = harness({}, [memory]);
    await h.service.complete(principal, baseRequest, live());
    const other = await h.service.complete(principal, { ...baseRequest, user_id: 'user-2' }, live());
    assert.equal(other.cache, 'MISS');
  });

  it('a source that does not apply is neither asked for a version nor for context', async () => {
    const rag = source('rag', { passages: [passage(1)] }, () => 'docs-1');
    const h = harness({}, [rag]);
    const result = await h.service.complete(principal, baseRequest, live());
    assert.equal(rag.contributed, 0);
    assert.equal(result.meta.citations, undefined);
    assert.equal(h.calls[0]?.messages.length, 1);
  });

  it('the shortest cache lifetime a source asks for wins', async () => {
    let now = 0;
    const web: ContextSource = {
      name: 'web',
      applies: () => true,
      version: async () => undefined,
      contribute: async () => ({ passages: [passage(1)], cacheTtlMs: 1000 }),
    };
    // The service's own TTL is an hour; the web source asks for one second.
    const cache = createMemoryCache({ maxBytes: 1 << 20, now: () => now });
    const withClock = new ChatService({
      router: { generate: async () => answer, stream: () => (async function* () {})() },
      cache,
      credits: { charge: async () => ({ ok: true, balance: 1 }), refund: async () => undefined },
      context: new ContextRegistry([web]),
      clock: () => now,
      cacheTtlMs: 3_600_000,
      price: () => 1,
      budget: () => ({ contextTokens: 4096, answerTokens: 256 }),
      unavailableReason: () => undefined,
    });
    assert.equal((await withClock.complete(principal, baseRequest, live())).cache, 'MISS');
    now = 999;
    assert.equal((await withClock.complete(principal, baseRequest, live())).cache, 'HIT');
    now = 1001;
    assert.equal((await withClock.complete(principal, baseRequest, live())).cache, 'MISS');
  });
});

describe('prompt assembly and its token budget', () => {
  const conversation = [{ role: 'user' as const, content: 'Question?' }];
  const long = (n: number) => ({
    text: 'x'.repeat(3000),
    citation: { source: 'document' as const, title: `Doc ${n}`, snippet: 'xxx', score: 1 },
  });

  it('passages that do not fit are left out whole, and so are their citations', () => {
    // 3,000 characters ≈ 1,000 tokens each: a 4,096-token window less a 1,500-token answer holds two.
    const assembled = assembleContext([{ passages: [long(1), long(2), long(3), long(4)] }], conversation, {
      contextTokens: 4096,
      answerTokens: 1500,
    });
    assert.deepEqual(
      assembled.citations.map((c) => c.index),
      [1, 2],
    );
    const text = assembled.system.join('\n');
    assert.ok(text.includes('[2] Doc 2') && !text.includes('[3]'));
    const used = estimateTokens(text) + estimateTokens('Question?');
    assert.ok(used <= 4096 - 1500, `${used} tokens used`);
  });

  it('a conversation that already fills the window leaves no room for sources', () => {
    const big = [{ role: 'user' as const, content: 'y'.repeat(12_000) }];
    const assembled = assembleContext([{ notes: ['n'], passages: [long(1)] }], big, {
      contextTokens: 4096,
      answerTokens: 512,
    });
    assert.deepEqual(assembled, { system: [], citations: [] });
  });

  it('a smaller passage later in the list still fits after a large one was left out', () => {
    const small = {
      text: 'short',
      citation: { source: 'web' as const, title: 'Small', snippet: 'short', score: 0.5, url: 'https://example.com' },
    };
    const assembled = assembleContext([{ passages: [long(1), small] }], conversation, {
      contextTokens: 1200,
      answerTokens: 256,
    });
    assert.deepEqual(
      assembled.citations.map((c) => [c.index, c.title]),
      [[1, 'Small']],
    );
  });

  it('refuses two sources of one name', () => {
    const registry = new ContextRegistry([source('memory', {})]);
    assert.throws(() => registry.register(source('memory', {})), /already registered/);
  });
});
