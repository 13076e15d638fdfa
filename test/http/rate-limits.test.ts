import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { manualClock, type Response, startTestServer, type TestServer } from '../support/server.js';

for (const backend of backends()) {
  describe(`rate limits (${backend})`, () => {
    const clock = manualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    let server: TestServer;

    before(async () => {
      server = await startTestServer(backend, {
        clock,
        config: {
          tiers: {
            business: { rpm: 1000, rpd: 3, monthly: 1000 },
            enterprise: { rpm: 1000, rpd: 1000, monthly: 4 },
          },
        },
      });
    });
    after(() => server.close());

    it('admits 10 of 11 requests at 10 RPM and answers the 11th with 429 and the headers', async () => {
      clock.set(Date.UTC(2026, 10, 21, 12, 0, 0));
      const { apiKey } = await server.createAccount('free');
      const statuses: number[] = [];
      let rejected: Response | undefined;
      for (let i = 0; i < 11; i++) {
        clock.advance(1000);
        const res = await server.request('GET', '/z1/models', { apiKey });
        statuses.push(res.status);
        if (res.status === 200) {
          assert.equal(res.headers.get('x-ratelimit-limit'), '10');
          assert.equal(res.headers.get('x-ratelimit-remaining'), String(9 - i));
        } else {
          rejected = res;
        }
      }
      assert.deepEqual(statuses, [...Array(10).fill(200), 429]);
      assert.ok(rejected);
      assert.equal(rejected.body.code, 'RATE_LIMIT_EXCEEDED');
      const details = rejected.body.details as { window: string; limit: number; reset: number };
      assert.equal(details.window, 'minute');
      assert.equal(details.limit, 10);
      // The oldest request was at 12:00:01; the window frees a slot 60 s later.
      const expectedReset = Date.UTC(2026, 10, 21, 12, 1, 1) / 1000;
      assert.equal(details.reset, expectedReset);
      assert.equal(rejected.headers.get('x-ratelimit-limit'), '10');
      assert.equal(rejected.headers.get('x-ratelimit-remaining'), '0');
      assert.equal(rejected.headers.get('x-ratelimit-reset'), String(expectedReset));
      assert.equal(rejected.headers.get('retry-after'), String(expectedReset - clock() / 1000));

      // A rejected request does not count: once the oldest leaves the window, exactly one fits.
      clock.set(Date.UTC(2026, 10, 21, 12, 1, 1, 500));
      assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200);
      assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 429);
    });

    it('admits exactly the remaining requests out of 50 concurrent ones', async () => {
      clock.set(Date.UTC(2026, 10, 21, 13, 0, 0));
      const { apiKey } = await server.createAccount('free');
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => server.request('GET', '/z1/models', { apiKey })),
      );
      const admitted = responses.filter((r) => r.status === 200).length;
      const limited = responses.filter((r) => r.status === 429).length;
      assert.equal(admitted, 10);
      assert.equal(limited, 40);
    });

    it('resets the day window at UTC midnight', async () => {
      clock.set(Date.UTC(2026, 10, 21, 23, 59, 0));
      const { apiKey } = await server.createAccount('business');
      for (let i = 0; i < 3; i++) {
        clock.advance(1000);
        assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200);
      }
      const rejected = await server.request('GET', '/z1/models', { apiKey });
      assert.equal(rejected.status, 429);
      assert.equal((rejected.body.details as { window: string }).window, 'day');
      assert.equal(rejected.headers.get('x-ratelimit-reset'), String(Date.UTC(2026, 10, 22) / 1000));
      clock.set(Date.UTC(2026, 10, 22, 0, 0, 1));
      assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200);
    });

    it('resets the month window on the first of the next UTC month', async () => {
      clock.set(Date.UTC(2026, 10, 20, 10, 0, 0));
      const { apiKey } = await server.createAccount('enterprise');
      for (let day = 0; day < 4; day++) {
        clock.advance(2 * 86_400_000);
        assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200);
      }
      const rejected = await server.request('GET', '/z1/models', { apiKey });
      assert.equal(rejected.status, 429);
      const details = rejected.body.details as { window: string; reset: number };
      assert.equal(details.window, 'month');
      assert.equal(details.reset, Date.UTC(2026, 11, 1) / 1000);
      clock.set(Date.UTC(2026, 11, 1, 0, 0, 0));
      const next = await server.request('GET', '/z1/models', { apiKey });
      assert.equal(next.status, 200);
    });

    it('reports the current windows in GET /z1/usage without counting the peek', async () => {
      clock.set(Date.UTC(2026, 10, 21, 15, 0, 0));
      const { apiKey } = await server.createAccount('startup');
      await server.request('GET', '/z1/models', { apiKey });
      const usage = await server.request<{ rate_limits: Record<string, { limit: number; remaining: number }> }>(
        'GET',
        '/z1/usage',
        { apiKey },
      );
      assert.equal(usage.status, 200);
      // Two requests counted (models + this usage call); the peek itself adds nothing.
      assert.equal(usage.body.rate_limits.minute?.limit, 60);
      assert.equal(usage.body.rate_limits.minute?.remaining, 58);
      assert.equal(usage.body.rate_limits.day?.remaining, 998);
    });
  });
}
