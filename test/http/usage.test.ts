import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { chatBody, manualClock, startTestServer, type TestServer } from '../support/server.js';

interface UsageBody {
  account_id: string;
  tier: string;
  credits: { balance: number };
  totals: { requests: number };
  period: { start: string; end: string };
  series: Array<{ key: string; requests: number }>;
}

for (const backend of backends()) {
  describe(`usage (${backend})`, () => {
    const clock = manualClock(Date.UTC(2026, 10, 21, 9, 0, 0));
    let server: TestServer;

    before(async () => {
      server = await startTestServer(backend, { clock });
    });
    after(() => server.close());

    it('records one row per authenticated request, whatever its outcome', async () => {
      const { accountId, apiKey } = await server.createAccount('free', 0);
      await server.request('GET', '/z1/models', { apiKey });
      await server.request('POST', '/z1/chat/completions', { apiKey, body: chatBody({ temperature: 9 }) });
      await server.request('POST', '/z1/chat/completions', { apiKey, body: chatBody() });
      await server.request('GET', '/z1/models', { apiKey: 'pv_sk_unknownunknownunknownunknown00' });
      const rows = await server.usageRows<Record<string, unknown>>(
        'SELECT endpoint, model, status, credits, cached FROM usage_records WHERE account_id = $1 ORDER BY id',
        [accountId],
      );
      assert.deepEqual(
        rows.map((r) => [r.endpoint, r.model, Number(r.status), Number(r.credits), Boolean(r.cached)]),
        [
          ['listModels', null, 200, 0, false],
          ['createChatCompletion', null, 400, 0, false],
          ['createChatCompletion', 'PV-TURBO', 402, 0, false],
        ],
      );
    });

    it('reports tier, balance, windows and totals, by day and by model', async () => {
      const { accountId, apiKey } = await server.createAccount('startup', 77);
      await server.request('GET', '/z1/models', { apiKey });
      clock.advance(86_400_000);
      await server.request('GET', '/z1/models/PV-TURBO', { apiKey });
      const res = await server.request<UsageBody>('GET', '/z1/usage?start=2026-11-01&group_by=day', {
        apiKey,
      });
      assert.equal(res.status, 200);
      assert.equal(res.body.account_id, accountId);
      assert.equal(res.body.tier, 'startup');
      assert.deepEqual(res.body.credits, { balance: 77 });
      assert.equal(res.body.totals.requests, 2, 'the usage call itself is recorded after it answers');
      assert.deepEqual(
        res.body.series.map((s) => [s.key, s.requests]),
        [
          ['2026-11-21', 1],
          ['2026-11-22', 1],
        ],
      );
      assert.equal(res.body.period.start, '2026-11-01T00:00:00.000Z');
      const byModel = await server.request<UsageBody>('GET', '/z1/usage?group_by=model', { apiKey });
      assert.deepEqual(
        byModel.body.series.map((s) => s.key),
        [''],
      );
      const inverted = await server.request<UsageBody>('GET', '/z1/usage?start=2026-11-10&end=2026-11-01', { apiKey });
      assert.equal(inverted.status, 200);
      assert.equal(inverted.body.totals.requests, 0, 'an end before the start is an empty period');
      const leap = await server.request<UsageBody>('GET', '/z1/usage?start=2026-06-30T23:59:60Z', { apiKey });
      assert.equal(leap.body.period.start, '2026-06-30T23:59:59.000Z');
    });
  });
}
