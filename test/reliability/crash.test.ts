import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { backends, createTestDatabase, type TestDatabase } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { type ServerProcess, startServerProcess } from '../support/processes.js';
import {
  createAccount,
  type LoadOptions,
  type LoadTally,
  newTally,
  runLoad,
  serverEnv,
  storedBalances,
} from '../support/reliability.js';

const CONNECTIONS = 24;

async function killHard(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGKILL');
  await once(server.child, 'exit');
}

/** Closed-loop load on the server until `ready`; then kill -9 while the load goes on. */
async function loadThenKill(
  server: ServerProcess,
  makeRequest: LoadOptions['makeRequest'],
  ready: (tally: LoadTally) => boolean,
): Promise<LoadTally> {
  let killed = false;
  const tally = newTally();
  const load = runLoad({ origin: server.url, connections: CONNECTIONS, makeRequest, stop: () => killed, tally });
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (ready(tally)) {
        clearInterval(check);
        resolve();
      } else if (tally.unanswered + tally.refused > 0) {
        clearInterval(check);
        reject(new Error('the server stopped answering before the kill'));
      }
    }, 2);
  });
  await killHard(server);
  killed = true;
  return load;
}

const ok = (tally: LoadTally) => tally.answered.get(200) ?? 0;

/**
 * kill -9 of a server under load, as an operator (or the OOM killer) would. Whatever it answered must
 * survive: every charge and every rate-limit admission a client was told about. Embedded SQLite keeps
 * both in memory and stores them by group commit; PostgreSQL stores each with its own statement.
 */
for (const backend of backends())
  describe(`kill -9 under load (${backend})`, () => {
    let upstream: MockUpstream;
    let database: TestDatabase;
    let server: ServerProcess | undefined;

    before(async () => {
      upstream = await startMockUpstream({ record: false });
    });
    after(async () => {
      if (server) await killHard(server);
      await upstream.close();
    });

    it('forgets no charge it answered: balance + charges received ≤ purchased, short by ≤ the requests in flight', {
      timeout: 120_000,
    }, async (t) => {
      database = await createTestDatabase(backend);
      try {
        const env = serverEnv(database, upstream.url, {
          tiers: { enterprise: { rpm: 1_000_000, rpd: 1_000_000, monthly: 10_000_000 } },
        });
        server = await startServerProcess(env);
        const purchased = 1_000_000;
        const accounts = await Promise.all(
          Array.from({ length: 6 }, () => createAccount((server as ServerProcess).url, 'enterprise', purchased)),
        );
        const body = JSON.stringify({
          model: 'PV-TURBO',
          user_id: 'crash',
          skip_cache: true,
          max_tokens: 8,
          messages: [{ role: 'user', content: 'hello' }],
        });
        const tally = await loadThenKill(
          server,
          (i) => ({
            method: 'POST',
            path: '/z1/chat/completions',
            headers: {
              Authorization: `Bearer ${accounts[i % accounts.length]?.apiKey}`,
              'Content-Type': 'application/json',
            },
            body,
          }),
          (t) => ok(t) >= 1500,
        );
        assert.deepEqual([...tally.answered.keys()], [200], 'every chat answered before the kill was served');
        assert.ok(tally.chargedCredits >= 1500, 'and charged');

        // A restart on the same data directory reads what the killed server left (then stops cleanly).
        server = await startServerProcess(env);
        await server.stop();
        const stored = await storedBalances(database);
        const balance = accounts.reduce((sum, a) => sum + (stored.get(a.accountId) ?? Number.NaN), 0);
        const bought = accounts.length * purchased;
        const received = tally.chargedCredits;
        assert.ok(
          balance + received <= bought,
          `credits given away: balance ${balance} + charges answered ${received} > purchased ${bought}`,
        );
        t.diagnostic(
          `answered ${received}, in flight at the kill ${tally.unanswered}, charged without an answer ${bought - (balance + received)}`,
        );
        // PV-TURBO costs 1 credit: each request in flight at the kill may have been charged, never more.
        assert.ok(
          bought - (balance + received) <= tally.unanswered,
          `${bought - (balance + received)} credits charged without an answer, ${tally.unanswered} requests in flight`,
        );
      } finally {
        await database.drop();
      }
    });

    it('forgets no admission it answered: a day limit holds across the kill', { timeout: 120_000 }, async (t) => {
      database = await createTestDatabase(backend);
      const utcDay = () => new Date().toISOString().slice(0, 10);
      const startedOn = utcDay();
      try {
        const perDay = 3000;
        const env = serverEnv(database, upstream.url, {
          tiers: { free: { rpm: 1_000_000, rpd: perDay, monthly: 1_000_000 } },
        });
        server = await startServerProcess(env);
        const { apiKey } = await createAccount(server.url, 'free', 0);
        const models = () => ({
          method: 'GET' as const,
          path: '/z1/models',
          headers: { Authorization: `Bearer ${apiKey}` },
        });
        const before = await loadThenKill(server, models, (t) => ok(t) >= perDay / 2);
        assert.deepEqual([...before.answered.keys()], [200]);

        server = await startServerProcess(env);
        const afterKill = await runLoad({
          origin: server.url,
          connections: CONNECTIONS,
          makeRequest: models,
          stop: (t) => (t.answered.get(429) ?? 0) > 0,
        });
        await server.stop();
        if (utcDay() !== startedOn) {
          // The day window starts again at UTC midnight (a CI run crossed it once: 1,501 + 3,503 admitted).
          t.skip('the load crossed UTC midnight, where the day limit starts again');
          return;
        }
        const admitted = ok(before) + ok(afterKill);
        t.diagnostic(
          `answered before the kill ${ok(before)}, in flight ${before.unanswered}, admitted after the restart ${ok(afterKill)}`,
        );
        assert.ok(admitted <= perDay, `${admitted} requests admitted in a day limited to ${perDay}`);
        // The other way: an admission that was made durable for a request that never got its answer is
        // counted; that costs the client at most the requests it had in flight.
        assert.ok(
          perDay - admitted <= before.unanswered,
          `${perDay - admitted} admissions lost to the client, ${before.unanswered} requests in flight`,
        );
      } finally {
        await database.drop();
      }
    });
  });
