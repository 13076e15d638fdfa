import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { startServer } from '../../src/server.js';
import { backends } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { chatBody, manualClock, startTestServer, type TestServer } from '../support/server.js';

interface ModelReport {
  model: string;
  requests: number;
  errors: number;
  upstream_errors: number;
  timeouts: number;
  availability: number;
  availability_target: number;
  error_rate: number;
  latency_ms: { p50: number; p95: number; p99: number };
  time_to_first_token_ms: { p50: number; p95: number; p99: number };
  latency_target_ms: number;
  meets_target: boolean;
}
interface SlaBody {
  object: string;
  window: string;
  tier: string;
  period: { start: string; end: string };
  models: ModelReport[];
}

const at = (hh: number, mm: number, ss: number) => Date.UTC(2026, 10, 22, hh, mm, ss);

/**
 * A scripted workload against the mock upstream, with an injected clock across a minute and an hour
 * boundary: the report's counts are exact, its percentiles fall in the histogram buckets the scripted
 * latencies fall in, and all of it survives a restart.
 */
for (const backend of backends()) {
  describe(`SLA report (${backend})`, () => {
    const clock = manualClock(at(10, 58, 30));
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;
    let accountId: string;

    before(async () => {
      upstream = await startMockUpstream();
      const target = (model: string) => ({
        provider: 'openai-compatible' as const,
        baseUrl: upstream.url,
        model,
        timeoutMs: 1500,
        maxRetries: 0,
      });
      server = await startTestServer(backend, {
        clock,
        config: {
          tiers: { startup: { rpm: 10_000, slaAvailabilityTarget: 0.5, slaLatencyTargetMs: 1000 } },
          routing: { 'PV-TURBO': [target('turbo')], 'PV-STANDARD': [target('standard')] },
        },
      });
      ({ apiKey, accountId } = await server.createAccount('startup', 1000));
    });
    after(async () => {
      await server.close();
      await upstream.close();
    });

    const chat = (model: string, overrides: Record<string, unknown> = {}) =>
      server.request('POST', '/z1/chat/completions', {
        apiKey,
        body: chatBody({ model, skip_cache: true, ...overrides }),
      });

    it('counts a scripted workload exactly, and estimates percentiles inside the right buckets', async () => {
      // 10:58: four quick answers.
      clock.set(at(10, 58, 40));
      for (let i = 0; i < 4; i++) assert.equal((await chat('PV-TURBO')).status, 200);
      // 10:59: an upstream failure (502).
      clock.set(at(10, 59, 40));
      upstream.script({ kind: 'status', status: 500 });
      assert.equal((await chat('PV-TURBO')).status, 502);
      // 11:00 (a new hour): two slow answers (~600 ms) and one the upstream never answers (504 after 1.5 s).
      clock.set(at(11, 0, 10));
      upstream.script({ kind: 'slow', chunks: ['a ', 'b ', 'c '], delayMs: 200 });
      upstream.script({ kind: 'slow', chunks: ['a ', 'b ', 'c '], delayMs: 200 });
      upstream.script({ kind: 'hang' });
      assert.equal((await chat('PV-TURBO')).status, 200);
      assert.equal((await chat('PV-TURBO')).status, 200);
      assert.equal((await chat('PV-TURBO')).status, 504);
      // Streams on another model: one whole, one cut by the upstream after it started (an error event).
      clock.set(at(11, 0, 20));
      upstream.script({ kind: 'slow', chunks: ['a ', 'b ', 'c '], delayMs: 50 });
      upstream.script({ kind: 'disconnect', afterChunks: 1 });
      const whole = await chat('PV-STANDARD', { stream: true });
      assert.equal(whole.status, 200);
      assert.match(whole.text, /\[DONE\]/);
      const cut = await chat('PV-STANDARD', { stream: true });
      assert.equal(cut.status, 200);
      assert.match(cut.text, /"status":"error"/);
      // Requests without a model are not in the report.
      await server.request('GET', '/z1/models', { apiKey });
      clock.set(at(11, 0, 30));

      const res = await server.request<SlaBody>('GET', '/z1/sla?window=1h', { apiKey });
      assert.equal(res.status, 200);
      assert.equal(res.body.window, '1h');
      assert.equal(res.body.tier, 'startup');
      assert.deepEqual(res.body.period, { start: '2026-11-22T10:01:00.000Z', end: '2026-11-22T11:01:00.000Z' });
      assert.deepEqual(
        res.body.models.map((m) => m.model),
        ['PV-STANDARD', 'PV-TURBO'],
      );
      const [standard, turbo] = res.body.models as [ModelReport, ModelReport];

      assert.equal(turbo.requests, 8);
      assert.equal(turbo.errors, 2);
      assert.equal(turbo.upstream_errors, 1);
      assert.equal(turbo.timeouts, 1);
      assert.equal(turbo.availability, 0.75);
      assert.equal(turbo.error_rate, 0.25);
      // Five quick requests, two at ~600 ms (500–1000 bucket), one at ~1.5 s (1000–2500 bucket).
      assert.ok(turbo.latency_ms.p50 <= 250, `p50 ${turbo.latency_ms.p50}`);
      assert.ok(turbo.latency_ms.p95 > 1000 && turbo.latency_ms.p95 <= 2500, `p95 ${turbo.latency_ms.p95}`);
      assert.ok(turbo.latency_ms.p99 >= turbo.latency_ms.p95 && turbo.latency_ms.p99 <= 2500);
      assert.equal(turbo.availability_target, 0.5);
      assert.equal(turbo.latency_target_ms, 1000);
      assert.equal(turbo.meets_target, false, 'p95 above the configured 1000 ms');

      assert.equal(standard.requests, 2);
      assert.equal(standard.errors, 1, 'a stream cut after its 200 is an upstream failure');
      assert.equal(standard.upstream_errors, 1);
      assert.equal(standard.availability, 0.5);
      assert.ok(standard.time_to_first_token_ms.p50 > 0);
      assert.ok(standard.time_to_first_token_ms.p95 <= standard.latency_ms.p95);
      // Availability meets the configured 0.5; whether latency does depends on how long the cut stream took.
      assert.equal(standard.meets_target, standard.latency_ms.p95 <= 1000);

      // The buckets: a minute, an hour and a day row per minute, hour and day the workload touched.
      await server.running.runtime.sla.flush();
      const rows = await server.running.runtime.db.query<{ resolution: string; n: number }>(
        `SELECT resolution, count(*) AS n FROM sla_buckets
          WHERE account_id = $1 AND model = 'PV-TURBO' GROUP BY resolution ORDER BY resolution`,
        [accountId],
      );
      assert.deepEqual(
        rows.map((r) => [r.resolution, Number(r.n)]),
        [
          ['day', 1],
          ['hour', 2],
          ['minute', 3],
        ],
      );

      // The longer windows read hour and day buckets and find the same requests.
      for (const window of ['24h', '7d', '30d']) {
        const wide = await server.request<SlaBody>('GET', `/z1/sla?window=${window}`, { apiKey });
        assert.deepEqual(
          wide.body.models.map((m) => [m.model, m.requests, m.errors]),
          [
            ['PV-STANDARD', 2, 1],
            ['PV-TURBO', 8, 2],
          ],
          window,
        );
      }
      // An hour later the 1h window no longer holds 10:58 and 10:59.
      clock.set(at(11, 59, 30));
      const later = await server.request<SlaBody>('GET', '/z1/sla?window=1h', { apiKey });
      assert.equal(later.body.models.find((m) => m.model === 'PV-TURBO')?.requests, 3);
      clock.set(at(11, 0, 30));
    });

    it('refuses the free tier with 403 FEATURE_NOT_ALLOWED', async () => {
      const free = await server.createAccount('free', 10);
      const res = await server.request('GET', '/z1/sla', { apiKey: free.apiKey });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'FEATURE_NOT_ALLOWED');
    });
    it('never makes a bucket for a path outside the contract', async () => {
      const res = await fetch(`${server.url}/z1/nope-${accountId}`, { headers: { Authorization: `Bearer ${apiKey}` } });
      assert.equal(res.status, 404);
      await server.running.runtime.sla.flush();
      const rows = await server.running.runtime.db.query<{ endpoint: string }>(
        'SELECT DISTINCT endpoint FROM sla_buckets WHERE account_id = $1 ORDER BY endpoint',
        [accountId],
      );
      // (An unrouted path is answered before authentication today, so it is not counted at all.)
      assert.ok(!rows.some((r) => r.endpoint.includes('nope')));
    });

    it('keeps the report across a restart (buckets written behind are flushed on stop)', async () => {
      const before = await server.request<SlaBody>('GET', '/z1/sla?window=1h', { apiKey });
      // One more request just before the stop: only in memory until close() flushes it.
      await chat('PV-TURBO');
      const config = server.running.runtime.config;
      await server.running.close();
      const restarted = await startServer(config, { clock, logger: pino({ level: 'silent' }) });
      try {
        const res = await fetch(`${restarted.url}/z1/sla?window=1h`, {
          headers: { Authorization: `Bearer ${apiKey}` },
        });
        assert.equal(res.status, 200);
        const body = (await res.json()) as SlaBody;
        const turbo = body.models.find((m) => m.model === 'PV-TURBO');
        const turboBefore = before.body.models.find((m) => m.model === 'PV-TURBO');
        assert.equal(turbo?.requests, (turboBefore?.requests ?? 0) + 1);
        assert.equal(turbo?.errors, turboBefore?.errors);
        assert.deepEqual(
          body.models.find((m) => m.model === 'PV-STANDARD'),
          before.body.models.find((m) => m.model === 'PV-STANDARD'),
        );
      } finally {
        await restarted.close();
      }
    });
  });
}
