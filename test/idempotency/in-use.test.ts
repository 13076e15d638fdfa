import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RawConfig } from '../../src/config/index.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { chatBody, startTestServer, type TestServer } from '../support/server.js';

/**
 * A duplicate of a running keyed request waits for it up to `idempotency.waitSeconds`: within the bound it gets
 * the first answer replayed; past it, 409 IDEMPOTENCY_KEY_IN_USE with Retry-After (the first still runs once).
 */
describe('Idempotency-Key: a duplicate of a running request', () => {
  let upstream: MockUpstream;
  let server: TestServer;

  before(async () => {
    upstream = await startMockUpstream();
    process.env.PVAI_TEST_UPSTREAM_KEY = 'sk-upstream-secret';
    const target = { provider: 'openai-compatible', baseUrl: upstream.url, model: 'm', maxRetries: 0 };
    const config = {
      tiers: { business: { rpm: 10_000, rpd: 100_000, monthly: 1_000_000 } },
      routing: { 'PV-TURBO': [{ ...target, apiKeyEnv: 'PVAI_TEST_UPSTREAM_KEY' }] },
      idempotency: { waitSeconds: 3 },
    } as RawConfig;
    server = await startTestServer('sqlite', { config });
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  async function post(apiKey: string, key: string) {
    const res = await fetch(`${server.url}/z1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify(chatBody({ model: 'PV-TURBO', skip_cache: true })),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  }
  const running = async (key: string) => {
    for (let i = 0; i < 200; i++) {
      const [row] = await server.usageRows<{ owner: string | null }>(
        'SELECT owner FROM idempotency_keys WHERE idem_key = $1',
        [key],
      );
      if (row?.owner) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.fail(`the request with key ${key} never started`);
  };

  it('past the wait bound: 409 IDEMPOTENCY_KEY_IN_USE with Retry-After; the first runs once', async () => {
    const { apiKey } = await server.createAccount('business', 100);
    upstream.script({ kind: 'slow', chunks: ['late'], delayMs: 8000 });
    const before = upstream.requests.length;
    const first = post(apiKey, 'slow-one');
    await running('slow-one');
    const duplicate = await post(apiKey, 'slow-one');
    assert.equal(duplicate.status, 409, duplicate.text);
    assert.equal((JSON.parse(duplicate.text) as { code: string }).code, 'IDEMPOTENCY_KEY_IN_USE');
    assert.ok(Number(duplicate.headers.get('retry-after')) >= 1, 'Retry-After in seconds');
    assert.equal((await first).status, 200);
    const replay = await post(apiKey, 'slow-one');
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(upstream.requests.length - before, 1, 'run once');
  });

  it('within the wait bound: the duplicate waits and gets the first answer', async () => {
    const { apiKey } = await server.createAccount('business', 100);
    upstream.script({ kind: 'slow', chunks: ['soon'], delayMs: 500 });
    const before = upstream.requests.length;
    const first = post(apiKey, 'quick-one');
    await running('quick-one');
    const duplicate = await post(apiKey, 'quick-one');
    const answered = await first;
    assert.equal(duplicate.status, 200, duplicate.text);
    assert.equal(duplicate.headers.get('idempotent-replayed'), 'true');
    assert.equal(duplicate.text, answered.text);
    assert.equal(upstream.requests.length - before, 1, 'run once');
  });
});
