import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type CachedResponse, createMemoryCache } from '../../src/cache/index.js';
import { runResponseCacheContract } from './response-cache.contract.js';

runResponseCacheContract('memory (lru-cache)', (clock) => createMemoryCache({ maxBytes: 1024 * 1024, now: clock.now }));

describe('memory response cache byte bound', () => {
  // Keys and bodies of fixed length make every entry cost exactly the same.
  const key = (i: number) => `key-${String(i).padStart(4, '0')}`;
  const entry = (i: number): CachedResponse => ({ body: { text: `body-${String(i).padStart(4, '0')}` }, createdAt: i });
  const entryBytes = Buffer.byteLength(key(0)) + Buffer.byteLength(JSON.stringify(entry(0).body));

  test('evicts least-recently-used entries once the bytes exceed maxBytes', async () => {
    const cache = createMemoryCache({ maxBytes: entryBytes * 10 });
    for (let i = 0; i < 10; i++) await cache.set(key(i), entry(i), 60_000);
    for (let i = 0; i < 10; i++) assert.ok(await cache.get(key(i)), `entry ${i} fits`);

    // Reading entry 0 makes it the most recently used, so entry 1 becomes the oldest.
    await cache.get(key(0));
    await cache.set(key(10), entry(10), 60_000);

    assert.equal(await cache.get(key(1)), undefined, 'the least recently used entry was evicted');
    assert.deepEqual(await cache.get(key(0)), entry(0), 'the recently read entry stayed');
    assert.deepEqual(await cache.get(key(10)), entry(10));
    for (let i = 2; i < 10; i++) assert.ok(await cache.get(key(i)), `entry ${i} stayed`);
    await cache.close();
  });

  test('counts bytes, not characters, so multi-byte text takes more room', async () => {
    const cache = createMemoryCache({ maxBytes: 100 });
    // 30 three-byte characters: 30 chars but 90+ bytes, so two can't fit together.
    const wide = (c: string): CachedResponse => ({ body: c.repeat(30), createdAt: 1 });
    await cache.set('a', wide('€'), 60_000);
    await cache.set('b', wide('₤'), 60_000);
    assert.equal(await cache.get('a'), undefined);
    assert.deepEqual(await cache.get('b'), wide('₤'));
    await cache.close();
  });

  test('an entry larger than maxBytes is not stored and evicts nothing', async () => {
    const cache = createMemoryCache({ maxBytes: entryBytes * 4 });
    await cache.set(key(1), entry(1), 60_000);
    await cache.set('huge', { body: 'x'.repeat(entryBytes * 5), createdAt: 1 }, 60_000);
    assert.equal(await cache.get('huge'), undefined);
    assert.deepEqual(await cache.get(key(1)), entry(1));
    await cache.close();
  });

  test('defaults to a 64 MiB bound and rejects a nonsensical one', () => {
    assert.doesNotThrow(() => createMemoryCache());
    assert.throws(() => createMemoryCache({ maxBytes: 0 }), RangeError);
    assert.throws(() => createMemoryCache({ maxBytes: 1.5 }), RangeError);
  });
});
