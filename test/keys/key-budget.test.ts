import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RawConfig } from '../../src/config/index.js';
import type { RunningServer } from '../../src/server.js';
import { backends } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { chatBody, manualClock, startReplica, startTestServer, type TestServer } from '../support/server.js';

interface Key {
  id: string;
  budget: { credits: number; period: string } | null;
  spend: { credits: number; period_start: string };
}

/**
 * A key's budget is charged in the same atomic step as the account's credits: under 30 concurrent chat requests
 * (on two replicas sharing PostgreSQL; on embedded SQLite's one server) a budget of N requests admits exactly N.
 */
for (const backend of backends()) {
  describe(`a key's credit budget (${backend})`, () => {
    const clock = manualClock(Date.now());
    let upstream: MockUpstream;
    let server: TestServer;
    let replica: RunningServer | undefined;
    let config: RawConfig;

    before(async () => {
      upstream = await startMockUpstream({ record: false });
      process.env.PVAI_TEST_UPSTREAM_KEY = 'sk-upstream-secret';
      const target = { provider: 'openai-compatible', baseUrl: upstream.url, model: 'm', maxRetries: 0 };
      config = {
        tiers: { business: { rpm: 10_000, rpd: 100_000, monthly: 1_000_000 } },
        routing: {
          'PV-TURBO': [{ ...target, apiKeyEnv: 'PVAI_TEST_UPSTREAM_KEY' }],
          'PV-STANDARD': [{ ...target, model: 'broken', apiKeyEnv: 'PVAI_TEST_UPSTREAM_KEY' }],
        },
      } as RawConfig;
      server = await startTestServer(backend, { clock, config });
      if (backend === 'postgres') replica = await startReplica(server, config);
    });
    after(async () => {
      await replica?.close();
      await server.close();
      await upstream.close();
    });

    async function keyWith(body: Record<string, unknown>, credits = 1000) {
      const { accountId } = await server.createAccount('business', credits);
      const res = await server.request<{ key: Key; api_key: string }>('POST', `/admin/accounts/${accountId}/keys`, {
        admin: true,
        body,
      });
      assert.equal(res.status, 201, res.text);
      return { accountId, keyId: res.body.key.id, apiKey: res.body.api_key, key: res.body.key };
    }

    const getKey = async (accountId: string, keyId: string) => {
      const res = await server.request<{ data: Key[] }>('GET', `/admin/accounts/${accountId}/keys`, { admin: true });
      const key = res.body.data.find((k) => k.id === keyId);
      assert.ok(key);
      return key;
    };
    const balance = async (accountId: string) =>
      Number((await server.request('GET', `/admin/accounts/${accountId}`, { admin: true })).body.credits);

    /** A chat request over real HTTP to one of the servers (the replica's answers are checked the same way). */
    async function chat(url: string, apiKey: string, model = 'PV-TURBO') {
      const res = await fetch(`${url}/z1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(chatBody({ model, skip_cache: true })),
      });
      return { status: res.status, body: (await res.json()) as { code?: string; message?: string } };
    }

    it('admits exactly N of 30 concurrent requests against a budget of N, the rest 402 KEY_BUDGET_EXCEEDED', async () => {
      clock.set(Date.now());
      const { accountId, keyId, apiKey } = await keyWith({ name: 'checkout', budget: { credits: 7, period: 'month' } });
      const urls = replica ? [server.url, replica.url] : [server.url];
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => chat(urls[i % urls.length] ?? '', apiKey)),
      );
      const admitted = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status === 402);
      assert.equal(admitted.length, 7, JSON.stringify(results.map((r) => r.status)));
      assert.equal(refused.length, 23);
      for (const r of refused) assert.equal(r.body.code, 'KEY_BUDGET_EXCEEDED');
      assert.equal(await balance(accountId), 1000 - 7, 'the account paid for the admitted ones alone');
      assert.equal((await getKey(accountId, keyId)).spend.credits, 7);
    });

    it('holds a budget set by PATCH at once on every replica, though each had the key cached', async () => {
      clock.set(Date.now());
      const { accountId, keyId, apiKey } = await keyWith({ name: 'later' });
      const urls = replica ? [server.url, replica.url] : [server.url];
      for (const url of urls) assert.equal((await chat(url, apiKey)).status, 200);
      assert.equal((await getKey(accountId, keyId)).spend.credits, urls.length, 'spend is counted without a budget');
      const patched = await server.request<Key>('PATCH', `/admin/keys/${keyId}`, {
        admin: true,
        body: { budget: { credits: urls.length + 5 } },
      });
      assert.equal(patched.status, 200);
      assert.deepEqual(patched.body.spend.credits, urls.length, 'changing the credits alone keeps the spend');
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => chat(urls[i % urls.length] ?? '', apiKey)),
      );
      assert.equal(results.filter((r) => r.status === 200).length, 5);
      assert.equal(results.filter((r) => r.body.code === 'KEY_BUDGET_EXCEEDED').length, 25);
      assert.equal(await balance(accountId), 1000 - urls.length - 5);
    });

    it('stays exact while charges and refunds of one key race on every replica (no deadlock, no leak)', async () => {
      clock.set(Date.now());
      const { accountId, keyId, apiKey } = await keyWith({ budget: { credits: 10 } });
      upstream.scriptModel('broken', { kind: 'status', status: 500 });
      try {
        const urls = replica ? [server.url, replica.url] : [server.url];
        // Three in four fail upstream after their charge (and are refunded), on both replicas alike. Which of the
        // 40 hold the 10 credits at a given instant is the race's: a request that pays may find every credit held by
        // charges still to be refunded, so how many pay is anything up to 10; the budget stays exact whatever it is.
        const results = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            chat(urls[Math.floor(i / 2) % urls.length] ?? '', apiKey, i % 4 === 0 ? 'PV-TURBO' : 'PV-STANDARD'),
          ),
        );
        const statuses = results.map((r) => r.status);
        assert.ok(
          statuses.every((s) => s === 200 || s === 402 || s === 502),
          `only answers, budget refusals and upstream failures: ${statuses}`,
        );
        assert.ok(statuses.includes(502), 'some charged requests failed and were refunded');
        const paid = statuses.filter((s) => s === 200).length;
        assert.ok(paid <= 10, `${paid} paid`);
        assert.equal((await getKey(accountId, keyId)).spend.credits, paid, 'every failed request was refunded');
        assert.equal(await balance(accountId), 1000 - paid);
      } finally {
        upstream.reset();
      }
    });

    it('words the refusal: the key, its budget and period, the spend and when it resets', async () => {
      clock.set(Date.UTC(2026, 10, 20, 12));
      const { keyId, apiKey } = await keyWith({ name: 'batch', budget: { credits: 1 } });
      assert.equal((await server.request('POST', '/z1/chat/completions', { apiKey, body: chatBody() })).status, 200);
      const res = await server.request('POST', '/z1/chat/completions', {
        apiKey,
        body: chatBody({ skip_cache: true }),
      });
      assert.equal(res.status, 402);
      assert.deepEqual(res.body, {
        status: 'error',
        code: 'KEY_BUDGET_EXCEEDED',
        message: `Key "batch" (${keyId}) has spent 1 credit of its budget of 1 this UTC month; this request costs 1. It resets at 2026-12-01T00:00:00.000Z`,
        details: {
          key_id: keyId,
          budget: 1,
          period: 'month',
          spent: 1,
          required: 1,
          resets_at: '2026-12-01T00:00:00.000Z',
        },
        error: {
          message: `Key "batch" (${keyId}) has spent 1 credit of its budget of 1 this UTC month; this request costs 1. It resets at 2026-12-01T00:00:00.000Z`,
          type: 'insufficient_quota',
          code: 'key_budget_exceeded',
          param: null,
        },
      });
    });

    it('starts a month budget afresh in the next UTC month; a total budget never', async () => {
      clock.set(Date.UTC(2026, 10, 30, 23, 59));
      const month = await keyWith({ budget: { credits: 2, period: 'month' } });
      const total = await keyWith({ budget: { credits: 2, period: 'total' } });
      const ask = (apiKey: string) =>
        server.request('POST', '/z1/chat/completions', { apiKey, body: chatBody({ skip_cache: true }) });
      for (const k of [month, total]) {
        assert.equal((await ask(k.apiKey)).status, 200);
        assert.equal((await ask(k.apiKey)).status, 200);
        assert.equal((await ask(k.apiKey)).status, 402);
      }
      clock.set(Date.UTC(2026, 11, 1, 0, 1));
      assert.equal((await ask(month.apiKey)).status, 200, 'December has its own budget');
      const refused = await ask(total.apiKey);
      assert.equal(refused.status, 402);
      assert.equal((refused.body.details as { resets_at: unknown }).resets_at, null);
      assert.match(String(refused.body.message), /in total; .*does not reset/);
      const spend = (await getKey(month.accountId, month.keyId)).spend;
      assert.deepEqual(spend, { credits: 1, period_start: '2026-12-01T00:00:00.000Z' });
      assert.deepEqual((await getKey(total.accountId, total.keyId)).spend, {
        credits: 2,
        period_start: '1970-01-01T00:00:00.000Z',
      });
    });

    it('gives the key its spend back when a request fails after it was charged', async () => {
      clock.set(Date.now());
      const { accountId, keyId, apiKey } = await keyWith({ budget: { credits: 1 } });
      upstream.scriptModel('m', { kind: 'status', status: 500 });
      try {
        const failed = await server.request('POST', '/z1/chat/completions', {
          apiKey,
          body: chatBody({ skip_cache: true }),
        });
        assert.equal(failed.status, 502, failed.text);
      } finally {
        upstream.reset();
      }
      assert.equal((await getKey(accountId, keyId)).spend.credits, 0);
      assert.equal(await balance(accountId), 1000);
      const again = await server.request('POST', '/z1/chat/completions', {
        apiKey,
        body: chatBody({ skip_cache: true }),
      });
      assert.equal(again.status, 200, 'the one credit of the budget is there again');
    });

    it('still refuses with INSUFFICIENT_CREDITS when the account, not the key, runs out', async () => {
      clock.set(Date.now());
      const { accountId, keyId, apiKey } = await keyWith({ budget: { credits: 10 } }, 1);
      const ask = () =>
        server.request('POST', '/z1/chat/completions', { apiKey, body: chatBody({ skip_cache: true }) });
      assert.equal((await ask()).status, 200);
      const res = await ask();
      assert.equal(res.status, 402);
      assert.equal(res.body.code, 'INSUFFICIENT_CREDITS');
      assert.equal((await getKey(accountId, keyId)).spend.credits, 1, 'the refused charge took nothing from the key');
    });

    it('carries the spend and limits to the rotated key', async () => {
      clock.set(Date.now());
      const { accountId, keyId, apiKey } = await keyWith({
        name: 'app',
        budget: { credits: 2 },
        rate_limits: { rpm: 50 },
        models: ['PV-TURBO'],
        metadata: { team: 'web' },
      });
      const ask = (k: string) =>
        server.request('POST', '/z1/chat/completions', { apiKey: k, body: chatBody({ skip_cache: true }) });
      assert.equal((await ask(apiKey)).status, 200);
      const rotated = await server.request<{ key: Key & Record<string, unknown>; api_key: string }>(
        'POST',
        `/admin/keys/${keyId}/rotate`,
        { admin: true },
      );
      assert.equal(rotated.status, 201);
      const key = rotated.body.key;
      assert.equal(key.spend.credits, 1);
      assert.deepEqual(key.budget, { credits: 2, period: 'month' });
      assert.deepEqual(key.rate_limits, { rpm: 50, rpd: null });
      assert.deepEqual(key.models, ['PV-TURBO']);
      assert.deepEqual(key.metadata, { team: 'web' });
      assert.equal((await ask(rotated.body.api_key)).status, 200);
      assert.equal((await ask(rotated.body.api_key)).status, 402, 'the budget did not reset by rotating');
      assert.equal((await getKey(accountId, key.id)).spend.credits, 2);
    });
  });
}
