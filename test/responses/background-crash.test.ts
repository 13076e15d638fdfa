import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { backends, createTestDatabase, type TestDatabase } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { openaiClient } from '../support/openai-client.js';
import { type ServerProcess, startServerProcess } from '../support/processes.js';
import { createAccount, serverEnv, stored } from '../support/reliability.js';
import { collectEvents, contiguousFrom, pollUntil, until, words } from './background-support.js';

const LEASE_MS = 1000;

async function killHard(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGKILL');
  await once(server.child, 'exit');
}

const chatCalls = (upstream: MockUpstream) => upstream.requests.filter((r) => r.path.endsWith('/chat/completions'));

/**
 * kill -9 of the `pvai serve` process running a background response (a short lease from config): the response
 * is never left `in_progress`. Embedded SQLite: the restarted server voids the dead one's leases and ends it
 * `failed` at once. PostgreSQL: another replica ends it once its lease ran out. It is never run again (its model
 * call may have been charged); a response still queued at the kill is simply run.
 */
for (const backend of backends()) {
  describe(`kill -9 during a background response (${backend})`, () => {
    let upstream: MockUpstream;
    let database: TestDatabase;
    const servers: ServerProcess[] = [];

    before(async () => {
      upstream = await startMockUpstream({ defaultText: 'Done.' });
      database = await createTestDatabase(backend);
    });
    after(async () => {
      for (const server of servers) await killHard(server);
      await upstream.close();
      await database.drop();
    });

    it('ends the running response failed (the server stopped), never in_progress, never run twice; runs the queued one', {
      timeout: 120_000,
    }, async (t) => {
      const env = serverEnv(database, upstream.url, {
        tiers: { business: { rpm: 10_000 } },
        responses: { backgroundLeaseMs: LEASE_MS, backgroundConcurrency: 1 },
      });
      const first = await startServerProcess(env);
      servers.push(first);
      const { apiKey } = await createAccount(first.url, 'business', 1000);
      // On PostgreSQL a second replica is up before the kill: it takes over once the lease ran out.
      const survivor = backend === 'postgres' ? await startServerProcess(env) : undefined;
      if (survivor) servers.push(survivor);

      upstream.script({ kind: 'slow', chunks: words(400), delayMs: 50 });
      const client = openaiClient(first.url, apiKey);
      const running = await client.responses.create({ model: 'PV-TURBO', input: 'A long one.', background: true });
      await until('the model call', () => chatCalls(upstream).length === 1);
      await pollUntil(client, running.id, ['in_progress']);
      const queued =
        backend === 'sqlite'
          ? await client.responses.create({ model: 'PV-TURBO', input: 'Waiting.', background: true })
          : undefined;
      if (queued) assert.equal((await client.responses.retrieve(queued.id)).status, 'queued');

      await killHard(first);
      const killedAt = performance.now();
      const next = survivor ?? (await startServerProcess(env));
      if (!survivor) servers.push(next);
      // SQLite: from the restarted server's start, which voids the dead one's leases; PostgreSQL: from the kill.
      const since = survivor ? killedAt : performance.now();
      const after = openaiClient(next.url, apiKey);

      const ended = await pollUntil(after, running.id, ['failed', 'completed', 'cancelled'], 20_000);
      const took = performance.now() - since;
      t.diagnostic(`ended ${ended.status} ${Math.round(took)} ms after the ${survivor ? 'kill' : 'restart'}`);
      assert.equal(ended.status, 'failed');
      assert.equal(ended.error?.code, 'service_unavailable');
      assert.match(ended.error?.message ?? '', /server running this background response stopped/);
      if (survivor) assert.ok(took >= LEASE_MS - 100, 'not before its lease ran out');
      assert.ok(took < 5000, 'not left in progress');
      const events = await collectEvents(await after.responses.retrieve(running.id, { stream: true }));
      assert.ok(contiguousFrom(events, 0));
      assert.equal(events.at(-1)?.type, 'response.failed');

      if (queued) {
        const ran = await pollUntil(after, queued.id, ['completed', 'failed'], 20_000);
        assert.equal(ran.status, 'completed');
      }
      await new Promise((resolve) => setTimeout(resolve, 2 * LEASE_MS));
      assert.equal(chatCalls(upstream).length, queued ? 2 : 1, 'the killed run was never run again');
    });

    it('a cancel while the server running it is dead ends it cancelled once its lease ran out', {
      timeout: 120_000,
      skip: backend === 'sqlite' ? 'a restarted SQLite owner ends it at start, before any cancel' : false,
    }, async (t) => {
      upstream.reset();
      const env = serverEnv(database, upstream.url, {
        tiers: { business: { rpm: 10_000 } },
        responses: { backgroundLeaseMs: 3000 },
      });
      for (const server of servers) await killHard(server);
      const doomed = await startServerProcess(env);
      servers.push(doomed);
      const { apiKey } = await createAccount(doomed.url, 'business', 1000);
      const survivor = await startServerProcess(env);
      servers.push(survivor);
      upstream.script({ kind: 'slow', chunks: words(400), delayMs: 50 });
      const running = await openaiClient(doomed.url, apiKey).responses.create({
        model: 'PV-TURBO',
        input: 'A long one.',
        background: true,
      });
      await until('the model call', () => chatCalls(upstream).length === 1);
      await pollUntil(openaiClient(doomed.url, apiKey), running.id, ['in_progress']);
      await killHard(doomed);
      const asked = performance.now();
      const cancelled = await openaiClient(survivor.url, apiKey).responses.cancel(running.id);
      t.diagnostic(`the cancel answered after ${Math.round(performance.now() - asked)} ms`);
      assert.equal(cancelled.status, 'cancelled');
      assert.ok(performance.now() - asked < 3000 + 3000, 'within its lease and a poll');
      assert.equal(chatCalls(upstream).length, 1);
    });

    it('a stop (SIGTERM) ends the response it runs failed before it exits, not a lease later', {
      timeout: 120_000,
    }, async () => {
      upstream.reset();
      const env = serverEnv(database, upstream.url, {
        tiers: { business: { rpm: 10_000 } },
        responses: { backgroundLeaseMs: 60_000 },
      });
      for (const server of servers) await killHard(server);
      const server = await startServerProcess(env);
      servers.push(server);
      const { apiKey } = await createAccount(server.url, 'business', 1000);
      upstream.script({ kind: 'slow', chunks: words(400), delayMs: 50 });
      const client = openaiClient(server.url, apiKey);
      const running = await client.responses.create({ model: 'PV-TURBO', input: 'A long one.', background: true });
      await until('the model call', () => chatCalls(upstream).length === 1);
      await pollUntil(client, running.id, ['in_progress']);

      await server.stop();
      assert.equal(server.child.exitCode, 0);
      const [row] = await stored<{ body: string }>(database, 'SELECT body FROM responses WHERE id = $1', [running.id]);
      const body = JSON.parse(row?.body ?? '{}') as { status: string; error: { code: string } | null };
      assert.equal(body.status, 'failed');
      assert.equal(body.error?.code, 'service_unavailable');
      const [run] = await stored<{ state: string }>(
        database,
        'SELECT state FROM response_runs WHERE response_id = $1',
        [running.id],
      );
      assert.equal(run?.state, 'done');
      const [last] = await stored<{ event: string }>(
        database,
        'SELECT event FROM response_events WHERE response_id = $1 ORDER BY sequence_number DESC LIMIT 1',
        [running.id],
      );
      assert.equal((JSON.parse(last?.event ?? '{}') as { type: string }).type, 'response.failed');
      assert.equal(upstream.disconnects, 1, 'its model call was aborted');
    });
  });
}
