import assert from 'node:assert/strict';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { type ServerProcess, startServerProcess } from '../support/processes.js';
import { createAccount, newTally, runLoad, serverEnv, stored, storedBalances } from '../support/reliability.js';
import {
  startThrowawayPostgres,
  type ThrowawayPostgres,
  throwawayPostgresSkip,
} from '../support/throwaway-postgres.js';

const PURCHASED = 1_000_000;
/** Keys stay known through the outage, so requests keep being authenticated (and recorded) while it lasts. */
const CONFIG = {
  authCacheTtlMs: 60_000,
  tiers: { enterprise: { rpm: 1_000_000, rpd: 1_000_000, monthly: 10_000_000 } },
};
const CHAT = JSON.stringify({
  model: 'PV-TURBO',
  user_id: 'outage',
  skip_cache: true,
  max_tokens: 8,
  messages: [{ role: 'user', content: 'hello' }],
});

interface Books {
  /** Usage rows, those answered 2xx, and their credits. */
  rows: number;
  ok: number;
  credits: number;
  /** Requests counted in the SLA's minute buckets. */
  slaRequests: number;
  /** Credits taken from the balance (the ledger). */
  charged: number;
}

async function books(database: TestDatabase, accountId: string): Promise<Books> {
  const [usage] = await stored<{ rows: number; ok: number; credits: number }>(
    database,
    `SELECT count(*) AS rows, coalesce(sum(CASE WHEN status < 300 THEN 1 ELSE 0 END), 0) AS ok,
            coalesce(sum(credits), 0) AS credits
       FROM usage_records WHERE account_id = $1`,
    [accountId],
  );
  const [sla] = await stored<{ requests: number }>(
    database,
    "SELECT coalesce(sum(requests), 0) AS requests FROM sla_buckets WHERE account_id = $1 AND resolution = 'minute'",
    [accountId],
  );
  const balance = (await storedBalances(database)).get(accountId) ?? Number.NaN;
  return {
    rows: Number(usage?.rows),
    ok: Number(usage?.ok),
    credits: Number(usage?.credits),
    slaRequests: Number(sla?.requests),
    charged: PURCHASED - balance,
  };
}

/** Items in a spill file (a JSON line a batch); 0 when there is none. */
function spilledItems(file: string): number {
  if (!existsSync(file)) return 0;
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .reduce((n, l) => n + (JSON.parse(l) as { items: unknown[] }).items.length, 0);
}

/**
 * A restart of PostgreSQL under a running pvai (its own throwaway server: the shared cluster is never stopped).
 * Usage rows and SLA buckets are written behind; a write that meets the outage used to be dropped (`lost: N` in
 * the log): 8,136 credits of usage for 8,171 charged across a 6 s restart. Now every row is kept and written once
 * the database is back, or spilled to the data directory by a server that stops meanwhile.
 */
describe('a PostgreSQL restart under a running server (usage rows and SLA buckets)', {
  skip: throwawayPostgresSkip(),
}, () => {
  let pg: ThrowawayPostgres;
  let upstream: MockUpstream;
  let server: ServerProcess | undefined;

  before(async () => {
    pg = await startThrowawayPostgres();
    upstream = await startMockUpstream({ record: false });
  });
  /** A server a failed test left running is killed, or it would keep this file from ending. */
  async function killLeftOver(): Promise<void> {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await once(server.child, 'exit');
    }
    server = undefined;
  }
  after(async () => {
    await killLeftOver();
    await upstream.close();
    await pg.destroy();
  });

  it('keeps every row across a 6 s restart mid-traffic: usage credits == credits charged, SLA == rows', {
    timeout: 120_000,
  }, async (t) => {
    const database = await createTestDatabase('postgres', pg.url);
    try {
      const env = serverEnv(database, upstream.url, CONFIG);
      server = await startServerProcess(env);
      const { accountId, apiKey } = await createAccount(server.url, 'enterprise', PURCHASED);
      let stop = false;
      const tally = newTally();
      const load = runLoad({
        origin: server.url,
        connections: 8,
        makeRequest: () => ({
          method: 'POST',
          path: '/z1/chat/completions',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
          body: CHAT,
        }),
        stop: () => stop,
        tally,
      });
      await sleep(1500);
      await pg.stop();
      const okAtStop = tally.answered.get(200) ?? 0;
      await sleep(6000);
      await pg.start();
      await sleep(2000);
      stop = true;
      await load;
      const ok = [...tally.answered].filter(([s]) => s < 300).reduce((n, [, c]) => n + c, 0);
      t.diagnostic(`answered ${JSON.stringify(Object.fromEntries(tally.answered))}, 2xx before the stop ${okAtStop}`);
      assert.ok(okAtStop > 50 && ok > okAtStop, 'traffic before and after the restart');
      assert.equal(tally.unanswered + tally.refused, 0);

      // Refunds of charges whose request failed in the outage are written behind too, on their own retry schedule:
      // the books agree once every writer has caught up, not at the first instant the usage rows have.
      const expected = (b: Books) =>
        b.ok === ok && b.credits === tally.chargedCredits && b.slaRequests === b.rows && b.charged === b.credits;
      const seen = await eventually(() => books(database, accountId), expected, 30_000);
      t.diagnostic(`books ${JSON.stringify(seen)}, X-Credits-Charged ${tally.chargedCredits}`);
      assert.equal(seen.ok, ok, 'a usage row for every request answered 2xx');
      assert.equal(seen.credits, tally.chargedCredits, 'usage credits == the credits the answers charged');
      assert.equal(
        seen.charged,
        seen.credits,
        'the balance took exactly that: a charge refused after it was taken is refunded',
      );
      assert.equal(seen.slaRequests, seen.rows, 'the SLA counted every request that has a usage row, once');
      await server.stop();
      assert.deepEqual(await books(database, accountId), seen, 'nothing written twice at the stop');
    } finally {
      await killLeftOver();
      await database.drop();
    }
  });

  it('a server stopped while PostgreSQL is away spills its rows; the next one on the data dir writes them', {
    timeout: 120_000,
  }, async (t) => {
    const database = await createTestDatabase('postgres', pg.url);
    try {
      const env = serverEnv(database, upstream.url, CONFIG);
      server = await startServerProcess(env);
      const { accountId, apiKey } = await createAccount(server.url, 'enterprise', PURCHASED);
      const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${server.url}/z1/chat/completions`, { method: 'POST', headers, body: CHAT });
        assert.equal(res.status, 200);
        await res.arrayBuffer();
      }
      const written = await eventually(
        () => books(database, accountId),
        (b) => b.rows === 20 && b.slaRequests === 20,
        5000,
      );
      assert.deepEqual([written.rows, written.slaRequests], [20, 20]);

      await pg.stop();
      // The key is known: these are authenticated and recorded, whatever the missing database makes of them.
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await fetch(`${server.url}/z1/models`, { headers });
        statuses.push(res.status);
        await res.arrayBuffer();
      }
      await server.stop();
      server = undefined;
      const usageFile = join(database.dataDir, 'pending', 'usage.jsonl');
      const slaFile = join(database.dataDir, 'pending', 'sla.jsonl');
      const usageSpilled = spilledItems(usageFile);
      const slaSpilled = spilledItems(slaFile);
      t.diagnostic(
        `statuses during the outage ${statuses.join(',')}; spilled ${usageSpilled} rows, ${slaSpilled} buckets`,
      );
      assert.ok(usageSpilled > 0, `usage rows spilled to ${usageFile}`);
      assert.ok(slaSpilled > 0, `SLA buckets spilled to ${slaFile}`);

      await pg.start();
      server = await startServerProcess(env);
      const expected = (b: Books) => b.rows === 20 + usageSpilled && b.slaRequests === b.rows;
      const seen = await eventually(() => books(database, accountId), expected, 15_000);
      assert.equal(seen.rows, 20 + usageSpilled, 'the spilled rows are written by the next server');
      assert.equal(seen.slaRequests, seen.rows, 'and the spilled SLA counts, once each');
      assert.equal(seen.credits, 20, 'the outage requests charged nothing');
      await eventually(
        async () => existsSync(usageFile) || existsSync(slaFile),
        (present) => !present,
        5000,
      );
      assert.equal(existsSync(usageFile) || existsSync(slaFile), false, 'the spill files are removed once written');
      await server.stop();
      server = undefined;
      assert.deepEqual(await books(database, accountId), seen);
    } finally {
      await killLeftOver();
      await database.drop();
    }
  });
});
