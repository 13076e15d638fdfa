import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../../src/server.js';
import { postgresOnly } from '../support/databases.js';
import { startReplica, startTestServer, type TestServer } from '../support/server.js';

const LIMIT = 6;
const WRONG_KEY = `pv_sk_${'C'.repeat(40)}`;

async function models(url: string, apiKey: string): Promise<{ status: number; headers: Headers; body: unknown }> {
  const res = await fetch(`${url}/z1/models`, { headers: { Authorization: `Bearer ${apiKey}` } });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

/**
 * Failed API-key authentications are counted per client address across replicas: before, each process
 * counted its own, so N replicas gave a key guesser N times the attempts.
 */
describe('failed authentications across replicas (postgres)', { skip: postgresOnly() }, () => {
  let first: TestServer;
  let second: RunningServer;

  before(async () => {
    first = await startTestServer('postgres', { config: { authFailuresPerMinute: LIMIT } });
    second = await startReplica(first, { authFailuresPerMinute: LIMIT });
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });

  it('reach the limit together: the next bad key on either replica gets 429 with Retry-After', async () => {
    const { apiKey } = await first.createAccount('startup');
    const replicas = [first.url, second.url];
    for (let i = 0; i < LIMIT; i++) {
      assert.equal((await models(replicas[i % 2] ?? '', WRONG_KEY)).status, 401, `failure ${i + 1}`);
    }
    for (const url of replicas) {
      const refused = await models(url, WRONG_KEY);
      assert.equal(refused.status, 429, url);
      assert.equal((refused.body as { code: string }).code, 'RATE_LIMIT_EXCEEDED');
      const wait = Number(refused.headers.get('retry-after'));
      assert.ok(wait >= 1 && wait <= 60, `Retry-After ${wait}`);
    }
    // Only failures are limited: a valid key from the same address is served by both.
    for (const url of replicas) assert.equal((await models(url, apiKey)).status, 200, url);
    const rows = await first.running.runtime.db.query<{ key: string; attempts: number }>(
      "SELECT key, attempts FROM attempt_counts WHERE key LIKE 'auth:%'",
    );
    assert.deepEqual(
      rows.map((r) => [r.key, Number(r.attempts)]),
      [['auth:127.0.0.1', LIMIT + 2]],
    );
  });
});

describe('failed authentications on embedded SQLite', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('sqlite', { config: { authFailuresPerMinute: LIMIT } });
  });
  after(() => server.close());

  it('are counted in memory: the limit holds and nothing is written per failure', async () => {
    for (let i = 0; i < LIMIT; i++) assert.equal((await models(server.url, WRONG_KEY)).status, 401);
    const refused = await models(server.url, WRONG_KEY);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    const rows = await server.running.runtime.db.query('SELECT key FROM attempt_counts');
    assert.deepEqual(rows, []);
  });
});
