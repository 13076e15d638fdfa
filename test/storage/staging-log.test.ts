import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { openDb, sqlitePath } from '../../src/storage/data-source.js';
import type { SqliteDb } from '../../src/storage/db.js';
import { BackgroundLane, type StagedStream, StagingLog } from '../../src/storage/index.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

type Item = [key: string, value: number];

describe('StagingLog (the embedded server’s write-behind log)', () => {
  let database: TestDatabase;
  let db: SqliteDb;

  before(async () => {
    database = await createTestDatabase('sqlite');
    const opened = await openDb({ dataDir: database.dataDir, owner: true });
    assert.equal(opened.dialect, 'sqlite');
    db = opened as SqliteDb;
    db.sqlite.exec('CREATE TABLE staged_items (stream TEXT, key TEXT, value INTEGER)');
  });
  after(async () => {
    await db.close();
    await database.drop();
  });

  /** A stream writing into `staged_items`, noting each write's keys; `failAfter` writes, it throws. */
  function stream(conn: Database.Database, name: string, writes: string[][] = [], failAfter = Infinity) {
    const insert = conn.prepare('INSERT INTO staged_items (stream, key, value) VALUES (?, ?, ?)');
    const s: StagedStream<Item> = {
      name,
      key: (item) => item[0],
      write: (items) => {
        if (writes.length >= failAfter) throw new Error('disk I/O error');
        writes.push(items.map((i) => i[0]));
        for (const [key, value] of items) insert.run(name, key, value);
      },
    };
    return s;
  }
  /** `s`, its write holding the event loop `ms(items)` beyond its own work, as a chunk of SQLite writes does. */
  function holdingTheLoop(s: StagedStream<Item>, ms: (items: readonly Item[]) => number): StagedStream<Item> {
    return {
      ...s,
      write: (items) => {
        s.write(items);
        const end = performance.now() + ms(items);
        while (performance.now() < end) {
          // busy, as SQLite is
        }
      },
    };
  }
  const written = (name: string) =>
    db.sqlite
      .prepare('SELECT key, value FROM staged_items WHERE stream = ? ORDER BY key, value')
      .all(name)
      .map((r) => {
        const row = r as { key: string; value: number };
        return [row.key, row.value];
      });
  const logRows = (name: string) =>
    db.sqlite.prepare('SELECT count(*) FROM staging_log WHERE stream = ?').pluck().get(name) as number;

  it('writes committed items a generation later, sorted by key, in chunks, never cutting a key', async () => {
    const writes: string[][] = [];
    const log = new StagingLog(db.sqlite, stream(db.sqlite, 'sorted', writes), { generationMs: 20, chunkItems: 2 });
    log.append([
      ['c', 1],
      ['a', 1],
    ]);
    log.append([
      ['b', 1],
      ['a', 2],
      ['c', 2],
    ]);
    assert.equal(logRows('sorted'), 2, 'one row of the log per commit');
    assert.deepEqual(written('sorted'), [], 'nothing written where it belongs yet');
    assert.ok(log.hasPending('a'));
    await new Promise((resolve) => setTimeout(resolve, 80));
    assert.deepEqual(
      writes,
      [
        ['a', 'a'],
        ['b', 'c', 'c'],
      ],
      "two chunks: a key's items stay together",
    );
    assert.deepEqual(written('sorted'), [
      ['a', 1],
      ['a', 2],
      ['b', 1],
      ['c', 1],
      ['c', 2],
    ]);
    assert.equal(logRows('sorted'), 0, 'the generation is gone from the log once written');
    assert.equal(log.hasPending('a'), false);
  });

  it("writes a generation in the lane's slices, paced, and hurries once a reader waits on it", async () => {
    // Each chunk (one item) outlasts the 1 ms slice, and the pause between slices is a minute.
    const lane = new BackgroundLane({ sliceMs: 1, gapMs: 60_000 });
    const writes: string[][] = [];
    const log = new StagingLog(
      db.sqlite,
      holdingTheLoop(stream(db.sqlite, 'paced', writes), () => 2),
      { generationMs: 10, chunkItems: 1, lane },
    );
    log.append([
      ['a', 1],
      ['b', 1],
      ['c', 1],
      ['d', 1],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(writes, [['a']], 'one slice, then the pause: the rest waits beside the requests');
    assert.ok(log.hasPending('d'));
    await log.drain();
    assert.deepEqual(writes, [['a'], ['b'], ['c'], ['d']], 'a reader waiting: written without the pause');
    assert.deepEqual(written('paced').length, 4);
    assert.equal(lane.waiting, 0);
  });

  it('sizes its chunks by what they cost: 16 items first, more while items are cheap, fewer when they are not', async () => {
    const keys = (n: number, prefix: string) =>
      Array.from({ length: n }, (_, i): Item => [`${prefix}${String(i).padStart(5, '0')}`, 1]);
    const cheapWrites: string[][] = [];
    const cheap = new StagingLog(db.sqlite, stream(db.sqlite, 'cheap', cheapWrites), { generationMs: 10 });
    cheap.append(keys(3000, 'k'));
    await cheap.drain();
    assert.equal(written('cheap').length, 3000);
    assert.equal(cheapWrites[0]?.length, 16, 'before anything is measured, 16 items');
    assert.ok(
      cheapWrites.length < 3000 / 16 && Math.max(...cheapWrites.map((w) => w.length)) > 16,
      `cheap items (a few µs each) come in larger chunks: ${cheapWrites.map((w) => w.length).join(' ')}`,
    );

    // Each item holds the loop 20 µs, so no more than 25 fit in the 0.5 ms a chunk may take.
    const slowWrites: string[][] = [];
    const slow = new StagingLog(
      db.sqlite,
      holdingTheLoop(stream(db.sqlite, 'slow', slowWrites), (items) => 0.02 * items.length),
      { generationMs: 10 },
    );
    slow.append(keys(400, 's'));
    await slow.drain();
    assert.equal(written('slow').length, 400);
    assert.ok(
      slowWrites.every((w) => w.length <= 25),
      `slow items stay within the budget: ${slowWrites.map((w) => w.length).join(' ')}`,
    );
  });

  it('never writes what a rolled-back transaction staged', async () => {
    const log = new StagingLog(db.sqlite, stream(db.sqlite, 'rollback'), { generationMs: 10 });
    assert.throws(() =>
      db.sqlite.transaction(() => {
        log.stage([['x', 1]]);
        throw new Error('the turn failed');
      })(),
    );
    log.rolledBack();
    log.append([['y', 1]]);
    await log.drain();
    assert.deepEqual(written('rollback'), [['y', 1]]);
    assert.equal(logRows('rollback'), 0);
  });

  it('after a crash, writes exactly what was staged and not written yet, once', async () => {
    const writes: string[][] = [];
    const errors: unknown[] = [];
    // The second chunk's write fails: the first chunk is written and marked done, the rest stays in the log.
    const first = new StagingLog(db.sqlite, stream(db.sqlite, 'crash', writes, 1), {
      generationMs: 10_000,
      chunkItems: 1,
      onError: (err) => errors.push(err),
    });
    first.append([
      ['k1', 1],
      ['k2', 1],
    ]);
    first.append([
      ['k3', 1],
      ['k1', 2],
    ]);
    await first.drain();
    assert.equal(errors.length, 1);
    assert.deepEqual(written('crash'), [
      ['k1', 1],
      ['k1', 2],
    ]);
    // The process is gone (the first log is never used again); a new one opens the same file.
    const conn = new Database(sqlitePath(database.dataDir));
    try {
      const recovered: string[][] = [];
      const second = new StagingLog(conn, stream(conn, 'crash', recovered));
      assert.deepEqual(recovered, [['k2', 'k3']], 'only what was not marked done');
      assert.deepEqual(written('crash'), [
        ['k1', 1],
        ['k1', 2],
        ['k2', 1],
        ['k3', 1],
      ]);
      assert.equal(logRows('crash'), 0);
      assert.equal(conn.prepare("SELECT count(*) FROM staging_done WHERE stream = 'crash'").pluck().get(), 0);
      second.drainNow();
    } finally {
      conn.close();
    }
  });

  it("logs items in the stream's encoding and recovers them through it, and rows logged before it had one", () => {
    // The encoding: an item as `key:value` text.
    const plain = stream(db.sqlite, 'encoded');
    const encoded: StagedStream<Item> = {
      ...plain,
      encode: ([key, value]) => `${key}:${value}`,
      decode: (logged) => {
        if (Array.isArray(logged)) return logged as Item;
        const [key, value] = String(logged).split(':');
        return [String(key), Number(value)];
      },
    };
    const first = new StagingLog(db.sqlite, encoded, { generationMs: 60_000 });
    first.append([
      ['e2', 2],
      ['e1', 1],
    ]);
    assert.deepEqual(db.sqlite.prepare("SELECT body FROM staging_log WHERE stream = 'encoded'").pluck().all(), [
      '["e2:2","e1:1"]',
    ]);
    // A row an earlier version logged without the encoding; then the process is gone and a new one opens the file.
    db.sqlite.prepare("INSERT INTO staging_log (stream, gen, body) VALUES ('encoded', 1, '[[\"e0\",7]]')").run();
    const conn = new Database(sqlitePath(database.dataDir));
    try {
      const recovered: string[][] = [];
      new StagingLog(conn, { ...stream(conn, 'encoded', recovered), decode: encoded.decode, encode: encoded.encode });
      assert.deepEqual(recovered, [['e0', 'e1', 'e2']]);
      assert.deepEqual(written('encoded'), [
        ['e0', 7],
        ['e1', 1],
        ['e2', 2],
      ]);
    } finally {
      conn.close();
    }
  });

  it('writes everything now on drainNow, in the same turn', () => {
    const log = new StagingLog(db.sqlite, stream(db.sqlite, 'now'), { chunkItems: 1 });
    log.append([
      ['p', 1],
      ['q', 1],
      ['r', 1],
    ]);
    log.drainNow();
    assert.equal(written('now').length, 3);
    assert.equal(logRows('now'), 0);
  });
});
