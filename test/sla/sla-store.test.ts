import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SlaBucket, SlaService, SqlSlaStore } from '../../src/sla/index.js';
import { SlaRecorder } from '../../src/sla/sla-recorder.js';
import { openDb } from '../../src/storage/data-source.js';
import type { Db } from '../../src/storage/db.js';
import { BackgroundLane } from '../../src/storage/index.js';
import { backends, createTestDatabase, type TestDatabase } from '../support/databases.js';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

function bucket(overrides: Partial<SlaBucket> = {}): SlaBucket {
  const latency = new Array<number>(14).fill(0);
  latency[3] = 2;
  return {
    accountId: 'acct_a',
    resolution: 'minute',
    bucketStart: NOW,
    endpoint: 'createChatCompletion',
    model: 'PV-TURBO',
    requests: 2,
    errors: 1,
    upstreamErrors: 1,
    timeouts: 0,
    latencySumMs: 150,
    latency,
    ttftCount: 1,
    ttftSumMs: 40,
    ttft: latency.map((_, i) => (i === 1 ? 1 : 0)),
    ...overrides,
  };
}

for (const backend of backends()) {
  describe(`SLA bucket store (${backend})`, () => {
    let database: TestDatabase;
    let db: Db;
    /** A second connection: on PostgreSQL a second pool, as another replica has. */
    let other: Db | undefined;

    before(async () => {
      database = await createTestDatabase(backend);
      const options = {
        dataDir: database.dataDir,
        owner: true,
        ...(database.databaseUrl ? { databaseUrl: database.databaseUrl } : {}),
      };
      db = await openDb(options);
      if (backend === 'postgres') other = await openDb(options);
    });
    after(async () => {
      await other?.close();
      await db.close();
      await database.drop();
    });

    it('adds to a stored bucket instead of overwriting it, so two replicas writing one minute sum', async () => {
      const a = new SqlSlaStore(db);
      const b = new SqlSlaStore(other ?? db);
      await Promise.all([a.add([bucket()]), b.add([bucket()]), a.add([bucket({ model: 'PV-CODEX' })])]);
      const rows = await a.read('acct_a', 'minute', NOW, NOW + 60_000);
      const turbo = rows.find((r) => r.model === 'PV-TURBO');
      assert.equal(turbo?.requests, 4);
      assert.equal(turbo?.errors, 2);
      assert.equal(turbo?.upstreamErrors, 2);
      assert.equal(turbo?.latencySumMs, 300);
      assert.equal(turbo?.latency[3], 4);
      assert.equal(turbo?.ttft[1], 2);
      assert.equal(rows.find((r) => r.model === 'PV-CODEX')?.requests, 2);
      assert.deepEqual(await a.read('acct_other', 'minute', NOW, NOW + 60_000), []);
    });

    it('stores thousands of buckets exactly, duplicates summed, several to a statement', async () => {
      const store = new SqlSlaStore(db);
      const buckets: SlaBucket[] = [];
      for (let a = 0; a < 700; a++)
        for (const resolution of ['minute', 'hour', 'day'] as const) {
          // Every account a different set of histogram slots, each slot's count its own.
          const latency = Array.from({ length: 14 }, (_, i) => ((a >> i) & 1) * (i + 1));
          const ttft = Array.from({ length: 14 }, (_, i) => (i === a % 14 ? 3 : 0));
          buckets.push(bucket({ accountId: `acct_many_${a}`, resolution, latency, ttft, requests: a + 1 }));
        }
      // The same key twice in one call is added up, not refused ("a row affected twice" on PostgreSQL).
      buckets.push(bucket({ accountId: 'acct_many_5', resolution: 'day', requests: 10 }));
      await store.add(buckets);
      for (const a of [0, 5, 337, 699]) {
        const [day] = await store.read(`acct_many_${a}`, 'day', NOW, NOW + 1);
        const latency = Array.from({ length: 14 }, (_, i) => ((a >> i) & 1) * (i + 1) + (a === 5 && i === 3 ? 2 : 0));
        assert.equal(day?.requests, a + 1 + (a === 5 ? 10 : 0));
        assert.deepEqual(day?.latency, latency);
        assert.equal(day?.ttft[a % 14], 3);
        assert.equal(
          day?.ttft.reduce((x, y) => x + y, 0),
          a === 5 ? 4 : 3,
        );
        const [minute] = await store.read(`acct_many_${a}`, 'minute', NOW, NOW + 60_000);
        assert.equal(minute?.requests, a + 1);
      }
    });

    it('adds each column whatever else a bucket counted in, past the shapes kept prepared too', async () => {
      const store = new SqlSlaStore(db);
      const zero = new Array<number>(14).fill(0);
      const only = (column: number, value: number): SlaBucket => {
        const latency = zero.map((_, i) => (column === 7 + i ? value : 0));
        const ttft = zero.map((_, i) => (column === 21 + i ? value : 0));
        const scalar = (i: number) => (column === i ? value : 0);
        return bucket({
          accountId: 'acct_shapes',
          requests: scalar(0),
          errors: scalar(1),
          upstreamErrors: scalar(2),
          timeouts: scalar(3),
          // Rounded as stored: 0.4 ms of latency is no latency.
          latencySumMs: column === 4 ? value : 0.4,
          ttftCount: scalar(5),
          ttftSumMs: scalar(6),
          latency,
          ttft,
        });
      };
      // 35 summed columns, each alone in a bucket of its own (35 shapes), each added twice.
      for (let round = 0; round < 2; round++) for (let c = 0; c < 35; c++) await store.add([only(c, c + 1)]);
      // A bucket that counted nothing adds nothing (and is not refused).
      await store.add([only(-1, 0)]);
      const [b] = await store.read('acct_shapes', 'minute', NOW, NOW + 60_000);
      assert.ok(b);
      const twice = (c: number) => 2 * (c + 1);
      assert.deepEqual(
        [b.requests, b.errors, b.upstreamErrors, b.timeouts, b.latencySumMs, b.ttftCount, b.ttftSumMs],
        [0, 1, 2, 3, 4, 5, 6].map(twice),
      );
      assert.deepEqual(
        b.latency,
        zero.map((_, i) => twice(7 + i)),
      );
      assert.deepEqual(
        b.ttft,
        zero.map((_, i) => twice(21 + i)),
      );
    });

    it('flushes a busy second in chunks that take turns with other work, and counts what came meanwhile', async () => {
      const store = new SqlSlaStore(db);
      const recorder = new SlaRecorder(store, { flushIntervalMs: 60_000 });
      const observe = (a: number) =>
        recorder.record({
          accountId: `acct_busy_${a}`,
          endpoint: 'createChatCompletion',
          model: 'PV-TURBO',
          status: a % 10 === 0 ? 502 : 200,
          latencyMs: 30,
          createdAt: NOW + 1000,
        });
      for (let a = 0; a < 1000; a++) observe(a);
      // The flush gives way to other work between its chunks instead of holding the event loop for 3,000 upserts.
      let turns = 0;
      let counting = true;
      const count = () => {
        turns++;
        if (counting) setImmediate(count);
      };
      setImmediate(count);
      const flushed = recorder.flush();
      await new Promise((resolve) => setImmediate(resolve));
      // Requests counted while the flush is under way: into buckets it has not written yet, or into the next flush.
      observe(0);
      observe(999);
      await flushed;
      counting = false;
      // 3,000 upserts are ~10 ms or more: slices of 1 ms (the background lane's) leave several turns between them.
      assert.ok(turns >= 5, `the flush ran in ${turns} turns`);
      await recorder.flush();
      for (const [a, requests, errors] of [
        [0, 2, 2],
        [999, 2, 0],
        [500, 1, 1],
        [1, 1, 0],
      ] as const) {
        for (const resolution of ['minute', 'hour', 'day'] as const) {
          const [b] = await store.read(`acct_busy_${a}`, resolution, 0, NOW + 86_400_000);
          assert.equal(b?.requests, requests, `${a} ${resolution}`);
          assert.equal(b?.errors, errors, `${a} ${resolution}`);
          assert.equal(b?.upstreamErrors, errors, `${a} ${resolution}`);
          assert.equal(b?.latency[2], requests, `${a} ${resolution}`);
        }
      }
    });

    it("writes a timed flush in the lane's slices, paced, and all of it once a read waits on it", async () => {
      const store = new SqlSlaStore(db);
      // The pause between the lane's slices is a minute: a timed flush gets one slice in this test.
      const lane = new BackgroundLane({ sliceMs: 1, gapMs: 60_000 });
      const recorder = new SlaRecorder(store, { flushIntervalMs: 10, lane });
      for (let a = 0; a < 1000; a++) {
        recorder.record({
          accountId: `acct_paced_${a}`,
          endpoint: 'createChatCompletion',
          model: 'PV-TURBO',
          status: 200,
          latencyMs: 30,
          createdAt: NOW + 2000,
        });
      }
      const stored = async () => {
        const rows = await db.query<{ n: number }>(
          "SELECT count(*) AS n FROM sla_buckets WHERE account_id LIKE 'acct_paced_%' AND resolution = 'minute'",
        );
        return Number(rows[0]?.n);
      };
      await new Promise((resolve) => setTimeout(resolve, 150));
      const paced = await stored();
      assert.ok(paced > 0 && paced < 1000, `one slice of the timed flush written: ${paced} of 1,000 accounts`);
      await recorder.flush();
      assert.equal(await stored(), 1000, 'a read waits on the flush: the rest written without the pause');
      assert.equal(lane.waiting, 0);
    });

    it('prunes each resolution past its retention and keeps the rest', async () => {
      const store = new SqlSlaStore(db);
      await store.add([
        bucket({ accountId: 'acct_p', resolution: 'minute', bucketStart: NOW - 7 * HOUR }),
        bucket({ accountId: 'acct_p', resolution: 'minute', bucketStart: NOW - 5 * HOUR }),
        bucket({ accountId: 'acct_p', resolution: 'hour', bucketStart: NOW - 4 * 24 * HOUR }),
        bucket({ accountId: 'acct_p', resolution: 'hour', bucketStart: NOW - 2 * 24 * HOUR }),
        bucket({ accountId: 'acct_p', resolution: 'day', bucketStart: NOW - 91 * 24 * HOUR }),
        bucket({ accountId: 'acct_p', resolution: 'day', bucketStart: NOW - 89 * 24 * HOUR }),
      ]);
      const service = new SlaService({
        store,
        clock: () => NOW,
        targets: () => ({ availability: 0.99, latencyMs: 1000 }),
      });
      assert.equal(await service.prune(NOW), 3);
      for (const resolution of ['minute', 'hour', 'day'] as const) {
        const rows = await store.read('acct_p', resolution, 0, NOW + 1);
        // The rows are summed per model: one bucket of 2 requests is left of each resolution's two.
        assert.equal(rows[0]?.requests, 2, resolution);
      }
      await service.close();
    });
  });
}
