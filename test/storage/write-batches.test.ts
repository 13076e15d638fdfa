import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BUCKET_COUNT, SqlSlaStore } from '../../src/sla/index.js';
import { openDb } from '../../src/storage/data-source.js';
import type { Db } from '../../src/storage/db.js';
import { SqlUsageStore } from '../../src/usage/index.js';
import { createTestDatabase, postgresOnly, type TestDatabase } from '../support/databases.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

/**
 * A write-behind batch retried after a COMMIT whose answer was lost (the connection dropped as PostgreSQL
 * restarted) must not count twice: each batch's transaction claims its id in `write_batches` first.
 */
describe('a retried batch is written once (PostgreSQL batch ids)', { skip: postgresOnly() }, () => {
  let database: TestDatabase;
  let db: Db;

  before(async () => {
    database = await createTestDatabase('postgres');
    db = await openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, owner: true });
  });
  after(async () => {
    await db.close();
    await database.drop();
  });

  it('usage rows and their hourly rollup: the same batch id twice is stored once, another id again', async () => {
    const usage = new SqlUsageStore(db);
    const row = {
      accountId: 'acct_batch',
      keyId: null,
      requestId: 'r',
      endpoint: 'createChatCompletion',
      model: 'PV-TURBO',
      status: 200,
      promptTokens: 3,
      completionTokens: 4,
      credits: 1,
      latencyMs: 5,
      cached: false,
      createdAt: NOW + 60_000,
    };
    const rows = Array.from({ length: 5 }, (_, i) => ({ ...row, requestId: `r${i}` }));
    await usage.recordMany(rows, 'batch-usage-1');
    await usage.recordMany(rows, 'batch-usage-1');
    const hour = 3_600_000;
    // The raw rows (a partial hour) and the rollup (a whole hour) both say five.
    assert.equal((await usage.totals('acct_batch', NOW, NOW + hour)).requests, 5);
    assert.equal((await usage.totals('acct_batch', NOW, NOW + 2 * hour)).credits, 5);
    await usage.recordMany(rows, 'batch-usage-2');
    assert.equal((await usage.totals('acct_batch', NOW, NOW + 2 * hour)).requests, 10);
  });

  it('SLA buckets: the same batch id twice adds once', async () => {
    const sla = new SqlSlaStore(db);
    const counts = new Array<number>(BUCKET_COUNT).fill(0);
    counts[2] = 3;
    const bucket = {
      accountId: 'acct_batch',
      resolution: 'minute' as const,
      bucketStart: NOW,
      endpoint: 'createChatCompletion',
      model: 'PV-TURBO',
      requests: 3,
      errors: 1,
      upstreamErrors: 0,
      timeouts: 0,
      latencySumMs: 30,
      latency: counts,
      ttftCount: 0,
      ttftSumMs: 0,
      ttft: new Array<number>(BUCKET_COUNT).fill(0),
    };
    await sla.add([bucket], 'batch-sla-1');
    await sla.add([bucket], 'batch-sla-1');
    const [read] = await sla.read('acct_batch', 'minute', NOW, NOW + 60_000);
    assert.deepEqual([read?.requests, read?.errors, read?.latency[2]], [3, 1, 3]);
  });
});
