import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryCache } from '../../src/cache/index.js';
import {
  assembleContext,
  ChatService,
  ContextRegistry,
  type ContextSource,
  estimateTokens,
} from '../../src/chat/index.js';
import { answer, baseRequest, harness, live, principal, source } from './chat-service-harness.js';

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
      credits: {
        charge: async (payer, amount) => ({ ok: true, balance: 1, refund: { accountId: payer.accountId, amount } }),
        refund: async () => undefined,
      },
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
