import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDb } from '../../src/storage/data-source.js';
import type { Db } from '../../src/storage/db.js';
import { SqlUsageStore, type UsageRecord } from '../../src/usage/index.js';
import { backends, createTestDatabase, type TestDatabase } from '../support/databases.js';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 10, 1, 0, 0, 0);

/** Rows every 7 hours and 13 minutes over 6 days, on two models and none, in batches of mixed days. */
function workload(accountId: string): UsageRecord[] {
  const rows: UsageRecord[] = [];
  for (let i = 0; T0 + i * 26_000_000 < T0 + 6 * DAY; i++) {
    rows.push({
      accountId,
      keyId: null,
      requestId: `req_${i}`,
      endpoint: 'createChatCompletion',
      model: i % 3 === 0 ? null : i % 3 === 1 ? 'PV-TURBO' : 'PV-CODEX',
      status: 200,
      promptTokens: i,
      completionTokens: 2 * i,
      credits: i % 5,
      latencyMs: 10,
      cached: false,
      createdAt: T0 + i * 26_000_000,
    });
  }
  return rows;
}

function naive(rows: UsageRecord[], start: number, end: number, key: (r: UsageRecord) => string) {
  const out = new Map<string, { requests: number; credits: number; promptTokens: number; completionTokens: number }>();
  for (const r of rows) {
    if (r.createdAt < start || r.createdAt >= end) continue;
    const k = key(r);
    const s = out.get(k) ?? { requests: 0, credits: 0, promptTokens: 0, completionTokens: 0 };
    s.requests += 1;
    s.credits += r.credits;
    s.promptTokens += r.promptTokens;
    s.completionTokens += r.completionTokens;
    out.set(k, s);
  }
  return out;
}

/** GET /z1/usage's sums come from the hourly rollup for whole hours and from rows for partial ones: same numbers. */
for (const backend of backends()) {
  describe(`usage hourly rollup (${backend})`, () => {
    let database: TestDatabase;
    let db: Db;

    before(async () => {
      database = await createTestDatabase(backend);
      db = await openDb({
        dataDir: database.dataDir,
        owner: true,
        ...(database.databaseUrl ? { databaseUrl: database.databaseUrl } : {}),
      });
    });
    after(async () => {
      await db.close();
      await database.drop();
    });

    it('answers totals and series exactly as the rows do, for whole and partial hours', async () => {
      const store = new SqlUsageStore(db);
      const rows = workload('acct_roll');
      await store.recordMany(rows.slice(0, 7));
      await store.recordMany(rows.slice(7));
      const periods: Array<[number, number]> = [
        [T0, T0 + 6 * DAY],
        [T0 + 3_600_000, T0 + 5 * DAY + 7_200_000],
        [T0 + DAY + 1, T0 + DAY + 50_000_000],
        [T0 + 26_000_000 + 1, T0 + 26_000_000 + 1_000],
        [T0 + 25_999_999, T0 + 26_000_001],
        [T0 - DAY, T0 + 10 * DAY],
        [T0 + 2 * DAY, T0 + 2 * DAY],
      ];
      for (const [start, end] of periods) {
        const all = naive(rows, start, end, () => '');
        assert.deepEqual(
          await store.totals('acct_roll', start, end),
          all.get('') ?? { requests: 0, credits: 0, promptTokens: 0, completionTokens: 0 },
        );
        const byDay = naive(rows, start, end, (r) => new Date(r.createdAt).toISOString().slice(0, 10));
        assert.deepEqual(
          await store.series('acct_roll', start, end, 'day'),
          [...byDay.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, t]) => ({ key, ...t })),
        );
        const byModel = naive(rows, start, end, (r) => r.model ?? '');
        assert.deepEqual(
          await store.series('acct_roll', start, end, 'model'),
          [...byModel.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([key, t]) => ({ key, ...t })),
        );
      }
      const rollup = await db.query<{ n: number }>('SELECT count(*) AS n FROM usage_hourly WHERE account_id = $1', [
        'acct_roll',
      ]);
      assert.equal(Number(rollup[0]?.n), rows.length, 'one rollup row per hour and model (a row every ~7 h here)');
    });

    it('writes a busy second of many accounts exactly: every row and column, the rollup summed per account and hour', async () => {
      const store = new SqlUsageStore(db);
      // 37 accounts with 1 to 37 rows each in one hour (chunks of every size the writer uses), two batches.
      const rows: UsageRecord[] = [];
      for (let a = 0; a < 37; a++)
        for (let n = 0; n <= a; n++)
          rows.push({
            accountId: `acct_busy_${a}`,
            keyId: n % 2 ? `key_${a}` : null,
            requestId: `req_busy_${a}_${n}`,
            endpoint: 'createChatCompletion',
            model: n % 4 === 3 ? null : 'PV-TURBO',
            status: n % 5 === 4 ? 429 : 200,
            promptTokens: n,
            completionTokens: a,
            credits: n % 3,
            latencyMs: 10.4 + n,
            cached: n % 2 === 0,
            createdAt: T0 + 7 * DAY + n * 1000,
            ...(n % 3 === 0 ? { userId: `user_${n}` } : {}),
          });
      await Promise.all([store.recordMany(rows.slice(0, 300)), store.recordMany(rows.slice(300))]);
      await store.flush();
      const stored = await db.query<Record<string, unknown>>(
        `SELECT account_id, key_id, request_id, model, status, prompt_tokens, completion_tokens, credits, latency_ms,
                cached, created_at, user_id
           FROM usage_records WHERE account_id LIKE 'acct_busy_%' ORDER BY request_id`,
      );
      // Each stored row read back into the record it was written from (SQLite keeps `cached` as 0/1).
      const readBack = stored.map(
        (r): UsageRecord => ({
          accountId: String(r.account_id),
          keyId: r.key_id === null ? null : String(r.key_id),
          requestId: String(r.request_id),
          endpoint: 'createChatCompletion',
          model: r.model === null ? null : String(r.model),
          status: Number(r.status),
          promptTokens: Number(r.prompt_tokens),
          completionTokens: Number(r.completion_tokens),
          credits: Number(r.credits),
          latencyMs: Number(r.latency_ms),
          cached: Boolean(r.cached),
          createdAt: Number(r.created_at),
          ...(r.user_id === null ? {} : { userId: String(r.user_id) }),
        }),
      );
      const rounded = rows.map((r) => ({ ...r, latencyMs: Math.round(r.latencyMs) }));
      assert.deepEqual(
        readBack,
        rounded.sort((x, y) => (x.requestId < y.requestId ? -1 : 1)),
      );
      for (const a of [0, 1, 15, 36]) {
        const mine = rows.filter((r) => r.accountId === `acct_busy_${a}`);
        assert.deepEqual(await store.totals(`acct_busy_${a}`, T0 + 7 * DAY, T0 + 8 * DAY), {
          requests: mine.length,
          credits: mine.reduce((x, r) => x + r.credits, 0),
          promptTokens: mine.reduce((x, r) => x + r.promptTokens, 0),
          completionTokens: mine.reduce((x, r) => x + r.completionTokens, 0),
        });
      }
    });
  });
}
