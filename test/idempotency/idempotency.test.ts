import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RawConfig } from '../../src/config/index.js';
import type { RunningServer } from '../../src/server.js';
import { backends } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { chatBody, startReplica, startTestServer, type TestServer } from '../support/server.js';

/**
 * Idempotency-Key over real HTTP: on embedded SQLite, and on two replicas sharing PostgreSQL (every second request
 * to the other replica). A retried chat and stream are answered once and charged once; another body is 422; keys
 * are per account; a duplicate waits for the running request; an answer over the cap is not replayed.
 */
for (const backend of backends()) {
  describe(`Idempotency-Key (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let replica: RunningServer | undefined;
    let urls: string[];

    before(async () => {
      upstream = await startMockUpstream();
      process.env.PVAI_TEST_UPSTREAM_KEY = 'sk-upstream-secret';
      const target = { provider: 'openai-compatible', baseUrl: upstream.url, model: 'm', maxRetries: 0 };
      const config = {
        tiers: { business: { rpm: 10_000, rpd: 100_000, monthly: 1_000_000 } },
        routing: { 'PV-TURBO': [{ ...target, apiKeyEnv: 'PVAI_TEST_UPSTREAM_KEY' }] },
        idempotency: { waitSeconds: 5, maxResponseBytes: 4096 },
      } as RawConfig;
      server = await startTestServer(backend, { config });
      if (backend === 'postgres') replica = await startReplica(server, config);
      urls = replica ? [server.url, replica.url] : [server.url];
    });
    after(async () => {
      await replica?.close();
      await server.close();
      await upstream.close();
    });

    const balance = async (accountId: string) =>
      Number((await server.request('GET', `/admin/accounts/${accountId}`, { admin: true })).body.credits);
    const usageCount = async (accountId: string) => {
      await replica?.runtime.usage.flush();
      const rows = await server.usageRows<{ n: number }>(
        'SELECT COUNT(*) AS n FROM usage_records WHERE account_id = $1',
        [accountId],
      );
      return Number(rows[0]?.n);
    };
    async function post(url: string, apiKey: string, key: string, body: unknown, path = '/z1/chat/completions') {
      const res = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify(body),
      });
      return { status: res.status, headers: res.headers, text: await res.text() };
    }

    it('answers a retried chat with the first answer, charged and recorded once', async () => {
      const { accountId, apiKey } = await server.createAccount('business', 100);
      const body = chatBody({ model: 'PV-TURBO', skip_cache: true });
      const before = upstream.requests.length;
      const first = await post(urls[0] as string, apiKey, 'order-1', body);
      assert.equal(first.status, 200, first.text);
      assert.equal(first.headers.get('idempotent-replayed'), null);
      const again = await post(urls.at(-1) as string, apiKey, 'order-1', body);
      assert.equal(again.status, 200);
      assert.equal(again.text, first.text, 'the same bytes');
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.headers.get('content-type'), first.headers.get('content-type'));
      assert.equal(again.headers.get('x-credits-charged'), first.headers.get('x-credits-charged'));
      assert.equal(upstream.requests.length - before, 1, 'the upstream was called once');
      const charged = Number(first.headers.get('x-credits-charged'));
      assert.ok(charged > 0);
      assert.equal(await balance(accountId), 100 - charged, 'charged once');
      assert.equal(await usageCount(accountId), 1, 'one usage row');
    });

    it('takes the same JSON in another key order and spacing for the same request', async () => {
      const { apiKey } = await server.createAccount('business', 100);
      const send = async (url: string, text: string) => {
        const res = await fetch(`${url}/z1/chat/completions`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${apiKey}`,
            'Content-Type': 'application/json',
            'Idempotency-Key': 'k-order',
          },
          body: text,
        });
        return { status: res.status, replayed: res.headers.get('idempotent-replayed'), text: await res.text() };
      };
      const body = chatBody({ model: 'PV-TURBO', skip_cache: true });
      const first = await send(urls[0] as string, JSON.stringify(body));
      assert.equal(first.status, 200, first.text);
      const reordered = Object.fromEntries(Object.entries(body).reverse());
      const again = await send(urls.at(-1) as string, JSON.stringify(reordered, null, 2));
      assert.equal(again.status, 200, again.text);
      assert.equal(again.replayed, 'true');
      assert.equal(again.text, first.text);
    });

    it('counts executions, replays and reused keys in /metrics', async () => {
      const { apiKey } = await server.createAccount('business', 100);
      const outcomes = async () => {
        const text = await (await fetch(`${server.url}/metrics`)).text();
        const read = (outcome: string) =>
          Number(
            text.match(new RegExp(`^pvai_idempotency_requests_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm'))?.[1],
          );
        return { executed: read('executed'), replayed: read('replayed'), reused: read('reused') };
      };
      const before = await outcomes();
      assert.ok(Number.isFinite(before.executed), 'the series exist from the start');
      const body = chatBody({ model: 'PV-TURBO', skip_cache: true });
      const url = urls[0] as string;
      assert.equal((await post(url, apiKey, 'counted-1', body)).status, 200);
      assert.equal((await post(url, apiKey, 'counted-1', body)).status, 200);
      assert.equal((await post(url, apiKey, 'counted-1', { ...body, temperature: 0.1 })).status, 422);
      const after = await outcomes();
      assert.deepEqual(
        {
          executed: after.executed - before.executed,
          replayed: after.replayed - before.replayed,
          reused: after.reused - before.reused,
        },
        { executed: 1, replayed: 1, reused: 1 },
      );
    });

    it('replays a stream byte for byte', async () => {
      const { accountId, apiKey } = await server.createAccount('business', 100);
      const body = chatBody({ model: 'PV-TURBO', skip_cache: true, stream: true });
      const first = await post(urls[0] as string, apiKey, 'stream-1', body);
      assert.equal(first.status, 200);
      assert.match(first.text, /data: \[DONE\]/);
      const again = await post(urls.at(-1) as string, apiKey, 'stream-1', body);
      assert.equal(again.text, first.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(again.headers.get('content-type'), first.headers.get('content-type'));
      assert.equal(await usageCount(accountId), 1);
    });

    it('refuses the same key with another body (422), and keys are per account', async () => {
      const a = await server.createAccount('business', 100);
      const b = await server.createAccount('business', 100);
      const body = chatBody({ model: 'PV-TURBO', skip_cache: true });
      assert.equal((await post(server.url, a.apiKey, 'shared', body)).status, 200);
      const other = await post(server.url, a.apiKey, 'shared', { ...body, max_tokens: 7 });
      assert.equal(other.status, 422);
      const error = JSON.parse(other.text) as { code: string; message: string };
      assert.equal(error.code, 'IDEMPOTENCY_KEY_REUSED');
      assert.match(error.message, /Idempotency-Key/);
      const theirs = await post(urls.at(-1) as string, b.apiKey, 'shared', { ...body, max_tokens: 7 });
      assert.equal(theirs.status, 200);
      assert.equal(theirs.headers.get('idempotent-replayed'), null, "another account's key is another key");
    });

    it('refuses a malformed key with 400 IDEMPOTENCY_KEY_INVALID', async () => {
      const { apiKey } = await server.createAccount('business', 100);
      const res = await post(server.url, apiKey, 'x'.repeat(256), chatBody({ model: 'PV-TURBO' }));
      assert.equal(res.status, 400);
      assert.equal((JSON.parse(res.text) as { code: string }).code, 'IDEMPOTENCY_KEY_INVALID');
    });

    it('runs concurrent duplicates (across replicas) once: the others wait and replay', async () => {
      const { accountId, apiKey } = await server.createAccount('business', 100);
      upstream.scriptModel('m', { kind: 'slow', chunks: ['slow ', 'answer'], delayMs: 300 });
      try {
        const body = chatBody({ model: 'PV-TURBO', skip_cache: true });
        const before = upstream.requests.length;
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) => post(urls[i % urls.length] as string, apiKey, 'together', body)),
        );
        for (const r of results) assert.equal(r.status, 200, r.text);
        assert.equal(new Set(results.map((r) => r.text)).size, 1, 'one answer');
        assert.equal(results.filter((r) => r.headers.get('idempotent-replayed') === 'true').length, 5);
        assert.equal(upstream.requests.length - before, 1);
        assert.equal(await usageCount(accountId), 1);
        assert.equal(await balance(accountId), 100 - Number(results[0]?.headers.get('x-credits-charged')));
      } finally {
        upstream.reset();
      }
    });

    it('keeps no answer over the size cap: a retry is 409 IDEMPOTENCY_RESPONSE_NOT_STORED, never run again', async () => {
      const { accountId, apiKey } = await server.createAccount('business', 100);
      upstream.scriptModel('m', { kind: 'slow', chunks: ['y'.repeat(5000)], delayMs: 0 });
      try {
        const body = chatBody({ model: 'PV-TURBO', skip_cache: true });
        const first = await post(server.url, apiKey, 'big', body);
        assert.equal(first.status, 200);
        const again = await post(urls.at(-1) as string, apiKey, 'big', body);
        assert.equal(again.status, 409);
        assert.equal((JSON.parse(again.text) as { code: string }).code, 'IDEMPOTENCY_RESPONSE_NOT_STORED');
        assert.equal(await usageCount(accountId), 1);
      } finally {
        upstream.reset();
      }
    });

    it('erases the records with their end user', async () => {
      const { apiKey } = await server.createAccount('business', 100);
      const body = chatBody({ model: 'PV-TURBO', skip_cache: true, user_id: 'erased-user' });
      const first = await post(server.url, apiKey, 'mine', body);
      assert.equal(first.status, 200, first.text);
      const exported = await server.request<{ idempotent_requests: { key: string }[] }>(
        'GET',
        '/z1/users/erased-user/export',
        { apiKey },
      );
      assert.deepEqual(
        exported.body.idempotent_requests.map((r) => r.key),
        ['mine'],
      );
      const erased = await server.request<{ erased: { idempotent_requests: number } }>(
        'DELETE',
        '/z1/users/erased-user',
        { apiKey },
      );
      assert.equal(erased.body.erased.idempotent_requests, 1);
      const again = await post(server.url, apiKey, 'mine', body);
      assert.equal(again.status, 200);
      assert.equal(again.headers.get('idempotent-replayed'), null, 'an erased key runs afresh');
    });
  });
}
