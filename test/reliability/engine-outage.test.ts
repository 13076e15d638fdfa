import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestDatabase } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { type ServerProcess, startServerProcess } from '../support/processes.js';
import { createAccount, newTally, runLoad, serverEnv, stored, storedBalances } from '../support/reliability.js';
import {
  startThrowawayPostgres,
  type ThrowawayPostgres,
  throwawayPostgresSkip,
} from '../support/throwaway-postgres.js';

const CLIENTS = 20;
const OUTAGE_MS = 6_000;
const PURCHASED = 1_000_000;

/** A replica's share of the database: its own data directory (spill files, locks), the one PostgreSQL. */
function replicaDatabase(url: string): TestDatabase {
  const dataDir = mkdtempSync(join(tmpdir(), 'pvai-outage-'));
  return { backend: 'postgres', dataDir, databaseUrl: url, drop: async () => rmSync(dataDir, { recursive: true }) };
}

/**
 * PostgreSQL stopped for 6 s under 20 clients with valid keys, two replicas in front of it, as an operator's
 * restart of the database does (a probe of it once saw 2,478 × 401 and 356 × 500 here). A valid key is never told
 * it is invalid, nothing escapes as a 500: a request the database could not serve is a 503 with Retry-After, and
 * readiness names the database. What was answered stays exact: the credits taken are the credits the answers
 * said they charged, and the usage rows and SLA buckets written behind the answers are all there afterwards.
 */
describe('a PostgreSQL outage under load (two replicas)', { skip: throwawayPostgresSkip() }, () => {
  let postgres: ThrowawayPostgres;
  let upstream: MockUpstream;
  const servers: ServerProcess[] = [];
  const databases: TestDatabase[] = [];

  before(async () => {
    postgres = await startThrowawayPostgres();
    upstream = await startMockUpstream({ record: false });
  });
  after(async () => {
    for (const server of servers) await server.stop();
    for (const database of databases) await database.drop();
    await upstream.close();
    await postgres.destroy();
  });

  it('answers 503 with Retry-After while it is away, never 401 or 500, and keeps credits, usage and SLA exact', {
    timeout: 180_000,
  }, async () => {
    const config = { tiers: { enterprise: { rpm: 1_000_000, rpd: 1_000_000, monthly: 10_000_000 } } };
    for (let i = 0; i < 2; i++) {
      const database = replicaDatabase(postgres.url);
      databases.push(database);
      servers.push(await startServerProcess(serverEnv(database, upstream.url, config)));
    }
    const [a, b] = servers as [ServerProcess, ServerProcess];
    const accounts = await Promise.all(Array.from({ length: 4 }, () => createAccount(a.url, 'enterprise', PURCHASED)));
    const body = JSON.stringify({
      model: 'PV-TURBO',
      user_id: 'outage',
      skip_cache: true,
      max_tokens: 8,
      messages: [{ role: 'user', content: 'hello' }],
    });
    let stop = false;
    const loads = [a, b].map((server, s) =>
      runLoad({
        origin: server.url,
        connections: CLIENTS / 2,
        tally: newTally(),
        stop: () => stop,
        makeRequest: (i) => ({
          method: 'POST',
          path: '/z1/chat/completions',
          headers: {
            Authorization: `Bearer ${accounts[(i + s) % accounts.length]?.apiKey}`,
            'Content-Type': 'application/json',
          },
          body,
        }),
      }),
    );
    await sleep(1_500);
    await postgres.stop();

    const ready = await fetch(`${a.url}/z1/health/ready`);
    const readiness = (await ready.json()) as { checks: { database: { ok: boolean } } };
    assert.equal(ready.status, 503, 'readiness says the service cannot serve');
    assert.equal(readiness.checks.database.ok, false, 'and names the database');
    const probe = await fetch(`${b.url}/z1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${accounts[0]?.apiKey}`, 'Content-Type': 'application/json' },
      body,
    });
    const refused = (await probe.json()) as { code: string; details: { engine: string } };
    assert.equal(probe.status, 503);
    assert.equal(refused.code, 'SERVICE_UNAVAILABLE');
    assert.equal(refused.details.engine, 'database');
    assert.equal(probe.headers.get('retry-after'), '1');
    // Every operation alike: a response, a read of usage, the admin API, a malformed key (401: no lookup needed).
    const key = { Authorization: `Bearer ${accounts[1]?.apiKey}`, 'Content-Type': 'application/json' };
    const others = [
      await fetch(`${a.url}/z1/responses`, {
        method: 'POST',
        headers: key,
        body: JSON.stringify({ model: 'PV-TURBO', input: 'hello' }),
      }),
      await fetch(`${b.url}/z1/usage`, { headers: key }),
      await fetch(`${a.url}/admin/accounts`, { headers: { Authorization: 'Bearer reliability-admin-token-0123' } }),
    ];
    for (const res of others) {
      const answer = (await res.json()) as { code: string };
      assert.equal(res.status, 503, `${res.url}: ${JSON.stringify(answer)}`);
      assert.equal(answer.code, 'SERVICE_UNAVAILABLE');
    }
    const malformed = await fetch(`${a.url}/z1/usage`, { headers: { Authorization: 'Bearer not-a-key' } });
    assert.equal(malformed.status, 401);

    await sleep(OUTAGE_MS);
    await postgres.start();
    await sleep(2_500);
    stop = true;
    const tallies = await Promise.all(loads);

    const statuses = new Map<number, number>();
    let charged = 0;
    for (const tally of tallies) {
      assert.equal(tally.unanswered + tally.refused, 0, 'every request got an answer');
      for (const [status, n] of tally.answered) statuses.set(status, (statuses.get(status) ?? 0) + n);
      charged += tally.chargedCredits;
    }
    const counts = JSON.stringify(Object.fromEntries(statuses));
    assert.deepEqual(
      [...statuses.keys()].filter((s) => s !== 200 && s !== 503),
      [],
      `only 200 and 503: ${counts}`,
    );
    assert.ok((statuses.get(503) ?? 0) > 0, `the outage was felt: ${counts}`);
    assert.ok((statuses.get(200) ?? 0) > 100, `and service resumed: ${counts}`);

    // Both replicas stop cleanly: what they hold behind is written (the database is back).
    for (const server of servers) await server.stop();
    servers.length = 0;
    const database = databases[0] as TestDatabase;
    const balances = await storedBalances(database);
    const taken = accounts.reduce((sum, acc) => sum + (PURCHASED - (balances.get(acc.accountId) ?? PURCHASED)), 0);
    assert.equal(taken, charged, 'the credits taken are the credits the answers said they charged');
    const [usage] = await stored<{ rows: string; ok: string; credits: string | null }>(
      database,
      `SELECT count(*) AS rows, count(*) FILTER (WHERE status = 200) AS ok, sum(credits) AS credits
         FROM usage_records WHERE lower(endpoint) LIKE '%chat%'`,
    );
    assert.equal(Number(usage?.ok), statuses.get(200), 'a usage row for every answered request');
    assert.equal(Number(usage?.credits), charged, 'usage holds every credit charged');
    const [sla] = await stored<{ requests: string | null }>(
      database,
      "SELECT sum(requests) AS requests FROM sla_buckets WHERE resolution = 'minute' AND lower(endpoint) LIKE '%chat%'",
    );
    assert.equal(Number(sla?.requests), Number(usage?.rows), 'the SLA counts every request usage counts');
  });
});
