import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { addressBucket } from '../../src/kernel/index.js';
import { type AttemptCounter, InProcessAttemptCounter, SqlAttemptCounter } from '../../src/limits/index.js';
import { openDb } from '../../src/storage/data-source.js';
import type { Db } from '../../src/storage/db.js';
import { backends, createTestDatabase, postgresOnly, type TestDatabase } from '../support/databases.js';

/** Shorter than SqlAttemptCounter's minute between prunes, so the upsert itself must start windows again. */
const WINDOW_MS = 10_000;
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);

/** The adapters of AttemptCounter; each must pass the whole contract below. */
type Variant = { name: string; make(scope: string): AttemptCounter; db?: () => Db };

const variants: Variant[] = [{ name: 'in process', make: () => new InProcessAttemptCounter({ windowMs: WINDOW_MS }) }];
const databases: TestDatabase[] = [];
const opened: Db[] = [];
for (const backend of backends()) {
  let db: Db | undefined;
  const current = () => {
    if (!db) throw new Error('database not open');
    return db;
  };
  before(async () => {
    const database = await createTestDatabase(backend);
    databases.push(database);
    db = await openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
    opened.push(db);
  });
  variants.push({
    name: `SQL on ${backend}`,
    make: (scope) => new SqlAttemptCounter(current(), { scope, windowMs: WINDOW_MS }),
    db: current,
  });
}
after(async () => {
  for (const db of opened) await db.close();
  for (const database of databases) await database.drop();
});

let scopes = 0;
/** A scope of its own for each test, so tests sharing a database never share a key. */
const fresh = (variant: Variant) => variant.make(`t${++scopes}`);

for (const variant of variants) {
  describe(`AttemptCounter contract (${variant.name})`, () => {
    it('counts each key in its own window, opened by its first attempt', async () => {
      const counter = fresh(variant);
      assert.deepEqual(await counter.count(['a', 'b'], T0), [
        { key: 'a', attempts: 1, windowEnd: T0 + WINDOW_MS },
        { key: 'b', attempts: 1, windowEnd: T0 + WINDOW_MS },
      ]);
      assert.deepEqual(await counter.count(['b'], T0 + 1_000), [{ key: 'b', attempts: 2, windowEnd: T0 + WINDOW_MS }]);
      assert.deepEqual(await counter.count(['c', 'a'], T0 + 2_000), [
        { key: 'c', attempts: 1, windowEnd: T0 + 2_000 + WINDOW_MS },
        { key: 'a', attempts: 2, windowEnd: T0 + WINDOW_MS },
      ]);
    });

    it('starts again from one once the window has ended', async () => {
      const counter = fresh(variant);
      for (let i = 0; i < 3; i++) await counter.count(['k'], T0 + i);
      assert.equal((await counter.count(['k'], T0 + WINDOW_MS - 1))[0]?.attempts, 4, 'still the first window');
      assert.deepEqual(await counter.count(['k'], T0 + WINDOW_MS), [
        { key: 'k', attempts: 1, windowEnd: T0 + 2 * WINDOW_MS },
      ]);
    });

    it('takes an attempt back within the window only, never below zero', async () => {
      const counter = fresh(variant);
      await counter.count(['k'], T0);
      await counter.count(['k'], T0);
      await counter.uncount(['k'], T0 + 1);
      assert.equal((await counter.count(['k'], T0 + 2))[0]?.attempts, 2);
      await counter.uncount(['k', 'never-counted'], T0 + 3);
      await counter.uncount(['k'], T0 + 3);
      await counter.uncount(['k'], T0 + 3);
      assert.equal((await counter.count(['k'], T0 + 4))[0]?.attempts, 1, 'not below zero');
      await counter.uncount(['k'], T0 + WINDOW_MS);
      assert.equal((await counter.count(['k'], T0 + WINDOW_MS))[0]?.attempts, 1, 'a new window, not -1 + 1');
    });

    it('forgets cleared keys and only those', async () => {
      const counter = fresh(variant);
      await counter.count(['a', 'b'], T0);
      await counter.count(['a', 'b'], T0);
      await counter.clear(['a']);
      assert.deepEqual(
        (await counter.count(['a', 'b'], T0 + 1)).map((c) => c.attempts),
        [1, 3],
      );
    });

    it('counts 40 concurrent attempts on one key exactly once each', async () => {
      const counter = fresh(variant);
      const counts = await Promise.all(Array.from({ length: 40 }, () => counter.count(['hot'], T0)));
      assert.deepEqual(
        counts.map(([c]) => c?.attempts).sort((x = 0, y = 0) => x - y),
        Array.from({ length: 40 }, (_, i) => i + 1),
      );
    });
  });
}

for (const variant of variants.filter((v) => v.db)) {
  describe(`SqlAttemptCounter's table (${variant.name})`, () => {
    const rows = (like: string) =>
      variant
        .db?.()
        .query<{ key: string; attempts: number; window_end: number }>(
          'SELECT key, attempts, window_end FROM attempt_counts WHERE key LIKE $1 ORDER BY key',
          [like],
        ) ?? [];

    it('keeps one row per scoped key; two scopes never share a row', async () => {
      const db = variant.db?.();
      assert.ok(db);
      const one = new SqlAttemptCounter(db, { scope: 'scope-one', windowMs: WINDOW_MS });
      const two = new SqlAttemptCounter(db, { scope: 'scope-two', windowMs: 5 * WINDOW_MS });
      await one.count(['same'], T0);
      await one.count(['same'], T0);
      await two.count(['same'], T0);
      assert.deepEqual(
        (await rows('scope-%')).map((r) => [r.key, Number(r.attempts), Number(r.window_end)]),
        [
          ['scope-one:same', 2, T0 + WINDOW_MS],
          ['scope-two:same', 1, T0 + 5 * WINDOW_MS],
        ],
      );
    });

    it('deletes windows that have ended at the next attempt, at most once a minute', async () => {
      const db = variant.db?.();
      assert.ok(db);
      const counter = new SqlAttemptCounter(db, { scope: 'prune', windowMs: WINDOW_MS });
      await counter.count(['old-1', 'old-2'], T0);
      const later = new SqlAttemptCounter(db, { scope: 'prune', windowMs: WINDOW_MS });
      await later.count(['new'], T0 + WINDOW_MS);
      assert.deepEqual(
        (await rows('prune:%')).map((r) => r.key),
        ['prune:new'],
        'the first attempt of a process prunes',
      );
      // A row that ends a second later, written by another counter (whose own first attempt prunes nothing).
      const short = new SqlAttemptCounter(db, { scope: 'prune', windowMs: 1000 });
      await short.count(['old-3'], T0 + WINDOW_MS + 1);
      await later.count(['new'], T0 + WINDOW_MS + 2000);
      assert.equal((await rows('prune:%')).length, 2, 'within the minute: no second prune');
      await later.count(['new'], T0 + WINDOW_MS + 60_000);
      assert.deepEqual(
        (await rows('prune:%')).map((r) => r.key),
        ['prune:new'],
      );
    });
  });
}

describe('two processes on one PostgreSQL database', { skip: postgresOnly() }, () => {
  let database: TestDatabase;
  let first: Db;
  let second: Db;
  before(async () => {
    database = await createTestDatabase('postgres');
    first = await openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
    second = await openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
  });
  after(async () => {
    await first.close();
    await second.close();
    await database.drop();
  });

  it('share the counts: 60 attempts spread over both are each counted once', async () => {
    const counters = [first, second].map((db) => new SqlAttemptCounter(db, { scope: 'shared', windowMs: WINDOW_MS }));
    const counts = await Promise.all(
      Array.from({ length: 60 }, (_, i) => counters[i % 2]?.count(['203.0.113.9'], T0 + i) ?? []),
    );
    assert.deepEqual(
      counts.map(([c]) => c?.attempts).sort((x = 0, y = 0) => x - y),
      Array.from({ length: 60 }, (_, i) => i + 1),
    );
  });
});

describe('addressBucket', () => {
  it('counts an IPv4 address as itself, also when a dual-stack socket maps it into IPv6', () => {
    assert.equal(addressBucket('203.0.113.7'), '203.0.113.7');
    assert.equal(addressBucket('::ffff:203.0.113.7'), '203.0.113.7');
    assert.equal(addressBucket('::FFFF:203.0.113.7'), '203.0.113.7');
  });

  it('counts an IPv6 address by its /64, whatever its spelling', () => {
    const bucket = '2001:db8:0:1::/64';
    for (const address of [
      '2001:db8:0:1::1',
      '2001:db8:0:1:ffff:ffff:ffff:ffff',
      '2001:0DB8:0000:0001:0:0:0:9',
      '2001:db8::1:0:0:0:1',
      '2001:db8:0:1::203.0.113.7',
      '2001:db8:0:1::1%eth0',
    ]) {
      assert.equal(addressBucket(address), bucket, address);
    }
    assert.equal(addressBucket('2001:db8:0:2::1'), '2001:db8:0:2::/64', 'the next /64 is another client');
    assert.equal(addressBucket('::1'), '0:0:0:0::/64');
    assert.equal(addressBucket('fe80::1'), 'fe80:0:0:0::/64');
  });

  it('leaves anything else as it is', () => {
    assert.equal(addressBucket(''), '');
    assert.equal(addressBucket('not an address'), 'not an address');
  });
});
