import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../src/server.js';
import { backends, createTestDatabase, postgresOnly, type TestDatabase } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { type ServerProcess, startServerProcess } from '../support/processes.js';
import { createAccount, serverEnv, stored } from '../support/reliability.js';
import { startReplica, startTestServer, type TestServer } from '../support/server.js';

interface MemoryBody {
  id: string;
  content: string;
}

const chatBody = (userId: string, text: string) =>
  JSON.stringify({ model: 'PV-TURBO', user_id: userId, messages: [{ role: 'user', content: text }] });

async function killHard(server: ServerProcess): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGKILL');
  await once(server.child, 'exit');
}

/**
 * An answered turn's facts are durable: the turn is stored (table memory_extractions) before its answer goes
 * out, and any server resumes it. Embeddings come from a real OpenAI-wire server that answers after 3 s, so
 * the extraction (whose reconciliation searches the user's memories by meaning) is still running when the
 * answer arrives and the server is killed, on any machine.
 */
for (const backend of backends())
  describe(`memory extraction survives kill -9 (${backend})`, () => {
    let upstream: MockUpstream;
    let database: TestDatabase;
    let server: ServerProcess | undefined;

    before(async () => {
      upstream = await startMockUpstream({ defaultText: 'Noted.' });
      database = await createTestDatabase(backend);
    });
    after(async () => {
      if (server) await killHard(server);
      await upstream.close();
      await database.drop();
    });

    it('loses none of the facts of a turn answered just before the kill, and stores them once after a restart', {
      timeout: 90_000,
    }, async () => {
      upstream.scriptModel('embed-slow', { kind: 'slow', chunks: [], delayMs: 3000 });
      const env = serverEnv(database, upstream.url, {
        embeddingUpstream: { baseUrl: upstream.url, model: 'embed-slow' },
        tiers: { free: { rpm: 10_000, rpd: 100_000 } },
      });
      server = await startServerProcess(env);
      const { apiKey } = await createAccount(server.url, 'free', 100);
      const headers = { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' };
      const said = 'I live in Tartu and I work as a nurse.';
      const answer = await fetch(`${server.url}/z1/chat/completions`, {
        method: 'POST',
        headers,
        body: chatBody('ada', said),
      });
      assert.equal(answer.status, 200);
      await answer.json();
      await killHard(server);

      // Stored with the answer, and not extracted yet.
      const queued = await stored<{ user_id: string; turn: string }>(
        database,
        'SELECT user_id, turn FROM memory_extractions',
      );
      assert.deepEqual(queued, [{ user_id: 'ada', turn: said }]);
      assert.deepEqual(await stored(database, 'SELECT id FROM memories'), []);

      upstream.scriptModel('embed-slow', undefined);
      server = await startServerProcess(env);
      const url = server.url;
      const list = await eventually(
        async () => {
          const res = await fetch(`${url}/z1/memory?user_id=ada`, { headers });
          const body = (await res.json()) as { data: MemoryBody[] };
          assert.equal(res.status, 200, JSON.stringify(body));
          return body.data;
        },
        (l) => l.some((m) => m.content.includes('Tartu')) && l.some((m) => m.content.includes('nurse')),
        // PostgreSQL: a replica takes the dead server's job over once its lease (15 s) ran out.
        45_000,
      );
      assert.equal(list.length, 2, JSON.stringify(list));
      await eventually(
        () => stored(database, 'SELECT id FROM memory_extractions'),
        (rows) => rows.length === 0,
        10_000,
      );
      assert.equal((await stored(database, 'SELECT id FROM memories')).length, 2);
    });
  });

describe('two replicas share the extraction queue (postgres)', { skip: postgresOnly() }, () => {
  let upstream: MockUpstream;
  let server: TestServer;
  let replica: RunningServer;
  let apiKey: string;

  before(async () => {
    upstream = await startMockUpstream({ defaultText: 'Noted.' });
    const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
    const config = {
      tiers: { free: { rpm: 10_000 } },
      routing: { 'PV-TURBO': [target], 'PV-STANDARD': [{ ...target, model: 'extractor' }] },
      memory: { extractionModel: 'PV-STANDARD' as const },
    };
    server = await startTestServer('postgres', { config });
    replica = await startReplica(server, config);
    ({ apiKey } = await server.createAccount('free', 1000));
  });
  after(async () => {
    await replica?.close();
    await server?.close();
    await upstream?.close();
  });

  it('extracts each answered turn once, in the order its user said them', { timeout: 60_000 }, async () => {
    // Each extraction takes 50 ms, so both servers' workers are busy at once.
    upstream.scriptModel('extractor', {
      kind: 'slow',
      chunks: [JSON.stringify({ facts: [], forget: [] })],
      delayMs: 50,
    });
    const turns: Array<{ user: string; text: string }> = [];
    for (let i = 0; i < 24; i++) turns.push({ user: `u${i % 4}`, text: `I keep beehive number ${i} in my garden.` });
    await Promise.all(
      turns.map(async (t, i) => {
        const res = await fetch(`${i % 2 === 0 ? server.url : replica.url}/z1/chat/completions`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
          body: chatBody(t.user, t.text),
        });
        assert.equal(res.status, 200);
        await res.json();
      }),
    );
    await server.running.runtime.memory.settled();
    await replica.runtime.memory.settled();
    const extracted = upstream.requests
      .filter((r) => r.model === 'extractor')
      .map((r) => (r.body as { messages: Array<{ content: string }> }).messages.at(-1)?.content ?? '');
    for (const t of turns) {
      assert.equal(extracted.filter((m) => m.includes(t.text)).length, 1, `${t.text} extracted once`);
    }
    assert.equal(extracted.length, turns.length);
    const queue = await server.running.runtime.db.query('SELECT id FROM memory_extractions');
    assert.deepEqual(queue, []);
  });
});

for (const backend of backends())
  describe(`erasing an end user drops their queued extraction (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;

    before(async () => {
      upstream = await startMockUpstream({ defaultText: 'Noted.' });
      server = await startTestServer(backend, {
        config: {
          embeddingUpstream: { baseUrl: upstream.url, model: 'embed' },
          tiers: { free: { rpm: 10_000 } },
          routing: {
            'PV-TURBO': [{ provider: 'openai-compatible', baseUrl: upstream.url, model: 'm', maxRetries: 0 }],
          },
        },
      });
      ({ apiKey } = await server.createAccount('free', 1000));
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });

    it('waits for the extraction under way, drops the waiting ones, and nothing of them is stored after', {
      timeout: 60_000,
    }, async () => {
      // Reconciliation embeds through this model: an extraction takes at least 1.5 s.
      upstream.scriptModel('embed', { kind: 'slow', chunks: [], delayMs: 1500 });
      for (const text of ['I live in Tartu.', 'I have two cats.', 'I speak Estonian.']) {
        const res = await server.request('POST', '/z1/chat/completions', {
          apiKey,
          body: JSON.parse(chatBody('eve', text)),
        });
        assert.equal(res.status, 200);
      }
      const queued = await server.running.runtime.db.query('SELECT turn FROM memory_extractions');
      assert.equal(queued.length, 3);
      const erased = await server.request('DELETE', '/z1/users/eve', { apiKey });
      assert.equal(erased.status, 200, erased.text);
      assert.deepEqual(await server.running.runtime.db.query('SELECT turn FROM memory_extractions'), []);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const list = await server.request<{ data: MemoryBody[] }>('GET', '/z1/memory?user_id=eve', { apiKey });
      assert.deepEqual(list.body.data, []);
      assert.deepEqual(await server.running.runtime.db.query("SELECT id FROM memories WHERE user_id = 'eve'"), []);
    });
  });
