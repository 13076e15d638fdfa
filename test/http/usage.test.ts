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
  series: Array<{ key: string | null; requests: number }>;
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
        [null],
        'the requests of no model are the group null',
      );
      const inverted = await server.request<UsageBody>('GET', '/z1/usage?start=2026-11-10&end=2026-11-01', { apiKey });
      assert.equal(inverted.status, 200);
      assert.equal(inverted.body.totals.requests, 0, 'an end before the start is an empty period');
      const leap = await server.request<UsageBody>('GET', '/z1/usage?start=2026-06-30T23:59:60Z', { apiKey });
      assert.equal(leap.body.period.start, '2026-06-30T23:59:59.000Z');
    });

    it('refuses offsets past ±14:00, offsets without minutes and year 0000 with 400 naming the parameter', async () => {
      const { apiKey } = await server.createAccount('free', 0);
      const refused: Array<[string, string]> = [
        ['start', '2026-11-01T00:00:00+99:99'],
        ['start', '2026-11-01T00:00:00+14:01'],
        ['end', '2026-11-01T00:00:00-15:00'],
        ['end', '2026-11-01T00:00:00+05'],
        ['start', '0000-01-01'],
        ['end', '0000-12-31T23:59:59Z'],
        ['start', '2026-11-01\t00:00:00Z'],
        ['start', '2026-02-30'],
      ];
      for (const [field, value] of refused) {
        const res = await server.request('GET', `/z1/usage?${field}=${encodeURIComponent(value)}`, { apiKey });
        assert.equal(res.status, 400, `${field}=${value}: ${res.text}`);
        assert.equal(res.body.code, 'INVALID_PARAMETER');
        assert.equal((res.body.details as { field: string }).field, field, value);
      }
    });

    it('accepts the widest offsets and the first and last years, keeping the period within them', async () => {
      const { apiKey } = await server.createAccount('free', 0);
      const accepted: Array<[string, string]> = [
        ['start=2026-11-01T12:00:00%2B14:00', '2026-10-31T22:00:00.000Z'],
        ['start=2026-11-01T12:00:00-14:00', '2026-11-02T02:00:00.000Z'],
        ['start=2026-11-01T12:00:00%2B0530', '2026-11-01T06:30:00.000Z'],
        ['start=2026-11-01t12:00:00z', '2026-11-01T12:00:00.000Z'],
        ['start=0001-01-01', '0001-01-01T00:00:00.000Z'],
        ['start=0001-01-01T00:00:00%2B14:00', '0001-01-01T00:00:00.000Z'],
      ];
      for (const [query, start] of accepted) {
        const res = await server.request<UsageBody>('GET', `/z1/usage?${query}`, { apiKey });
        assert.equal(res.status, 200, `${query}: ${res.text}`);
        assert.equal(res.body.period.start, start, query);
      }
      const last = await server.request<UsageBody>(
        'GET',
        '/z1/usage?start=9999-12-31T23:00:00Z&end=9999-12-31T23:59:59-14:00',
        { apiKey },
      );
      assert.equal(last.status, 200, last.text);
      assert.equal(last.body.period.end, '9999-12-31T23:59:59.999Z');
    });
  });
}
