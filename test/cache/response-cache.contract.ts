import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { type CachedResponse, type ResponseCache, responseCacheKey } from '../../src/cache/index.js';

/** A clock the tests move by hand, so expiry needs no sleeping. */
export interface ManualClock {
  now: () => number;
  advance(ms: number): void;
}

export function createManualClock(start = 1_750_000_000_000): ManualClock {
  let current = start;
  return {
    now: () => current,
    advance(ms) {
      current += ms;
    },
  };
}

export type MakeResponseCache = (clock: ManualClock) => ResponseCache | Promise<ResponseCache>;

/**
 * The behaviour every ResponseCache adapter must share. Each test gets a new
 * cache on its own clock; keys are unique per test, so adapters backed by a
 * shared store (one PostgreSQL table) need no cleanup between tests.
 */
export function runResponseCacheContract(name: string, makeCache: MakeResponseCache): void {
  describe(`ResponseCache contract: ${name}`, () => {
    const opened: ResponseCache[] = [];

    async function open(clock = createManualClock()): Promise<ResponseCache> {
      const cache = await makeCache(clock);
      opened.push(cache);
      return cache;
    }

    afterEach(async () => {
      await Promise.all(opened.splice(0).map((cache) => cache.close()));
    });

    test('misses on an unknown key', async () => {
      const cache = await open();
      assert.equal(await cache.get(uniqueKey()), undefined);
    });

    test('returns an equal body and createdAt after set', async () => {
      const cache = await open();
      const key = uniqueKey();
      const value = completionEntry('Hello there');
      await cache.set(key, value, 60_000);
      assert.deepEqual(await cache.get(key), value);
    });

    test('round-trips awkward JSON exactly: unicode, NUL, nesting, key order', async () => {
      const cache = await open();
      const key = uniqueKey();
      const body = {
        z: 1,
        a: 'emoji 🚀 and \u0000 nul',
        nested: { list: [1, 'two', null, { deep: true }] },
        '10': 'x',
      };
      await cache.set(key, { body, createdAt: 1 }, 60_000);
      const hit = await cache.get(key);
      assert.deepEqual(hit?.body, body);
      assert.equal(JSON.stringify(hit?.body), JSON.stringify(body));
    });

    test('stores non-object JSON bodies too', async () => {
      const cache = await open();
      for (const body of ['just text', 42, null, [1, 2, 3]]) {
        const key = uniqueKey();
        await cache.set(key, { body, createdAt: 5 }, 60_000);
        assert.deepEqual(await cache.get(key), { body, createdAt: 5 });
      }
    });

    test('mutating a returned entry does not change the cache', async () => {
      const cache = await open();
      const key = uniqueKey();
      await cache.set(key, completionEntry('original'), 60_000);
      const first = await cache.get(key);
      assert.ok(first);
      mutateCompletion(first);
      assert.deepEqual(await cache.get(key), completionEntry('original'));
    });

    test('mutating the stored value after set does not change the cache', async () => {
      const cache = await open();
      const key = uniqueKey();
      const value = completionEntry('original');
      await cache.set(key, value, 60_000);
      mutateCompletion(value);
      assert.deepEqual(await cache.get(key), completionEntry('original'));
    });

    test('an entry expires once its TTL has elapsed', async () => {
      const clock = createManualClock();
      const cache = await open(clock);
      const key = uniqueKey();
      await cache.set(key, completionEntry('short-lived'), 1_000);
      clock.advance(999);
      assert.ok(await cache.get(key), 'still alive 1 ms before expiry');
      clock.advance(1);
      assert.equal(await cache.get(key), undefined, 'gone exactly at expiry');
      clock.advance(-500);
      assert.equal(await cache.get(key), undefined, 'reading an expired entry removed it (lazy cleanup)');
    });

    test('each entry has its own TTL', async () => {
      const clock = createManualClock();
      const cache = await open(clock);
      const shortKey = uniqueKey();
      const longKey = uniqueKey();
      await cache.set(shortKey, completionEntry('short'), 1_000);
      await cache.set(longKey, completionEntry('long'), 10_000);
      clock.advance(5_000);
      assert.equal(await cache.get(shortKey), undefined);
      assert.deepEqual(await cache.get(longKey), completionEntry('long'));
    });

    test('overwriting replaces the value and restarts the TTL', async () => {
      const clock = createManualClock();
      const cache = await open(clock);
      const key = uniqueKey();
      await cache.set(key, completionEntry('first'), 1_000);
      clock.advance(900);
      await cache.set(key, completionEntry('second', 2), 1_000);
      clock.advance(900);
      assert.deepEqual(await cache.get(key), completionEntry('second', 2));
    });

    test('delete removes an entry, and deleting a missing key is fine', async () => {
      const cache = await open();
      const key = uniqueKey();
      await cache.set(key, completionEntry('doomed'), 60_000);
      await cache.delete(key);
      assert.equal(await cache.get(key), undefined);
      await cache.delete(uniqueKey());
    });

    test('the same request from two accounts uses separate entries', async () => {
      const cache = await open();
      const request = { model: `model-${randomUUID()}`, messages: [{ role: 'user', content: 'Same question' }] };
      const keyA = responseCacheKey('account-a', request);
      const keyB = responseCacheKey('account-b', request);
      assert.notEqual(keyA, keyB);
      await cache.set(keyA, completionEntry('answer for A'), 60_000);
      assert.equal(await cache.get(keyB), undefined);
      await cache.set(keyB, completionEntry('answer for B'), 60_000);
      assert.deepEqual(await cache.get(keyA), completionEntry('answer for A'));
      assert.deepEqual(await cache.get(keyB), completionEntry('answer for B'));
    });

    test('50 parallel sets and gets of distinct keys are consistent', async () => {
      const cache = await open();
      const keys = Array.from({ length: 50 }, () => uniqueKey());
      await Promise.all(keys.map((key, i) => cache.set(key, completionEntry(`answer ${i}`, i), 60_000)));
      const hits = await Promise.all(keys.map((key) => cache.get(key)));
      hits.forEach((hit, i) => {
        assert.deepEqual(hit, completionEntry(`answer ${i}`, i));
      });
    });

    test('50 parallel writers and readers of one key only ever see whole values', async () => {
      const cache = await open();
      const key = uniqueKey();
      const candidates = Array.from({ length: 50 }, (_, i) => completionEntry(`racer ${i}`, i));
      const reads = await Promise.all(
        candidates.flatMap((value) => [cache.set(key, value, 60_000).then(() => undefined), cache.get(key)]),
      );
      for (const read of reads) {
        if (read !== undefined) assert.ok(candidates.some((candidate) => isDeepStrictEqual(candidate, read)));
      }
      const final = await cache.get(key);
      assert.ok(final && candidates.some((candidate) => isDeepStrictEqual(candidate, final)));
    });

    test('rejects a TTL that is not a positive number', async () => {
      const cache = await open();
      for (const ttl of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
        await assert.rejects(cache.set(uniqueKey(), completionEntry('x'), ttl), RangeError);
      }
    });

    test('rejects a body that has no JSON form', async () => {
      const cache = await open();
      await assert.rejects(cache.set(uniqueKey(), { body: undefined, createdAt: 1 }, 60_000), TypeError);
    });

    test('close can be called twice', async () => {
      const cache = await open();
      await cache.close();
      await cache.close();
    });
  });
}

export function uniqueKey(): string {
  return `contract-${randomUUID()}`;
}

/** A realistic cached value: the shape of an OpenAI chat.completion. */
export function completionEntry(content: string, createdAt = 1_750_000_000_000): CachedResponse {
  return {
    createdAt,
    body: {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: Math.floor(createdAt / 1000),
      model: 'test-model',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 },
    },
  };
}

function mutateCompletion(entry: CachedResponse): void {
  const body = entry.body as { model: string; choices: { message: { content: string } }[] };
  body.model = 'tampered';
  const choice = body.choices[0];
  if (choice) choice.message.content = 'tampered';
  body.choices.push({ message: { content: 'extra' } });
  entry.createdAt = 0;
}
