import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import type { Metric } from 'prom-client';
import { LATENCY_BOUNDS_MS } from '../../src/sla/index.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { chatBody, startTestServer, type TestServer } from '../support/server.js';

type Scrape = ParsedFamily[];

function family(scrape: Scrape, name: string): ParsedFamily {
  const found = scrape.find((f) => f.name === name);
  assert.ok(found, `${name} is exposed`);
  return found;
}

/** A counter's or gauge's value for exactly these labels (0 when the series does not exist yet). */
function value(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  const sample = family(scrape, name).metrics.find(
    (m) =>
      Object.keys(labels).length === Object.keys(m.labels ?? {}).length &&
      Object.entries(labels).every(([k, v]) => m.labels?.[k] === v),
  );
  return sample ? Number(sample.value) : 0;
}

type HistogramValues = Awaited<ReturnType<Metric['get']>>['values'];
/** A histogram's values carry the series name (`…_bucket`, `…_count`); the type says so only of some. */
const nameOf = (v: HistogramValues[number]) => (v as { metricName?: string }).metricName ?? '';

/**
 * A histogram's observation count for these labels, from prom-client's own values: the text parser
 * folds every labelled series of a histogram into one (it follows an old prom2json), so histograms are
 * read where they are kept, and the text is still parsed whole.
 */
function count(values: HistogramValues, labels: Record<string, string>): number {
  const sample = values.find(
    (v) => nameOf(v).endsWith('_count') && Object.entries(labels).every(([k, l]) => v.labels[k] === l),
  );
  return sample ? sample.value : 0;
}

/** GET /metrics parsed with a real Prometheus text-format parser; its counters move by the scripted amounts. */
describe('Prometheus metrics', () => {
  let upstream: MockUpstream;
  let server: TestServer;

  before(async () => {
    upstream = await startMockUpstream();
    server = await startTestServer('sqlite', {
      config: {
        tiers: { startup: { rpm: 10_000 }, free: { rpm: 2 } },
        routing: {
          'PV-TURBO': [{ provider: 'openai-compatible', baseUrl: upstream.url, model: 'm', maxRetries: 0 }],
        },
      },
    });
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });

  const histogram = async (name: string): Promise<HistogramValues> => {
    const metric = server.running.runtime.metrics.registry.getSingleMetric(name);
    assert.ok(metric, name);
    return (await metric.get()).values;
  };
  const scrape = async () => {
    const res = await fetch(`${server.url}/metrics`);
    assert.equal(res.status, 200);
    const text = await res.text();
    return {
      parsed: parsePrometheusTextFormat(text),
      text,
      type: res.headers.get('content-type') ?? '',
      duration: await histogram('pvai_request_duration_seconds'),
      ttft: await histogram('pvai_time_to_first_token_seconds'),
    };
  };

  it('counts requests, latency, time to first token, tokens, credits, cache and rate limits exactly', async () => {
    const paid = await server.createAccount('startup', 1000);
    const free = await server.createAccount('free', 10);
    const start = await scrape();
    const before = start.parsed;

    const chat = (content: string) =>
      server.request('POST', '/z1/chat/completions', {
        apiKey: paid.apiKey,
        body: chatBody({ messages: [{ role: 'user', content }] }),
      });
    assert.equal((await chat('one')).headers.get('x-cache'), 'MISS');
    assert.equal((await chat('two')).headers.get('x-cache'), 'MISS');
    assert.equal((await chat('three')).headers.get('x-cache'), 'MISS');
    assert.equal((await chat('one')).headers.get('x-cache'), 'HIT');
    upstream.script({ kind: 'status', status: 500 });
    assert.equal((await chat('four')).status, 502);
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await server.request('GET', '/z1/models', { apiKey: free.apiKey })).status);
    assert.deepEqual(statuses, [200, 200, 429]);

    // The last requests' usage rows wait up to 50 ms in their buffer: written, nothing is pending.
    await server.running.runtime.usage.flush();
    const after = await scrape();
    assert.match(after.type, /^text\/plain/);
    const delta = (name: string, labels: Record<string, string> = {}) =>
      value(after.parsed, name, labels) - value(before, name, labels);
    const chatLabels = { endpoint: 'createChatCompletion', model: 'PV-TURBO' };
    assert.equal(delta('pvai_requests_total', { ...chatLabels, status: '200' }), 4);
    assert.equal(delta('pvai_requests_total', { ...chatLabels, status: '502' }), 1);
    assert.equal(delta('pvai_requests_total', { endpoint: 'listModels', model: 'none', status: '200' }), 2);
    assert.equal(delta('pvai_requests_total', { endpoint: 'listModels', model: 'none', status: '429' }), 1);
    assert.equal(delta('pvai_rate_limit_rejections_total'), 1);
    // The mock's usage: 12 prompt and 7 completion tokens per answer; a cache hit processes none.
    assert.equal(delta('pvai_tokens_total', { model: 'PV-TURBO', kind: 'prompt' }), 36);
    assert.equal(delta('pvai_tokens_total', { model: 'PV-TURBO', kind: 'completion' }), 21);
    // PV-TURBO costs 1 credit; a hit costs 0, a failure nothing.
    assert.equal(delta('pvai_credits_charged_total', { model: 'PV-TURBO' }), 3);
    assert.equal(delta('pvai_cache_lookups_total', { result: 'miss' }), 3);
    assert.equal(delta('pvai_cache_lookups_total', { result: 'hit' }), 1);
    assert.equal(count(after.duration, chatLabels) - count(start.duration, chatLabels), 5);
    assert.equal(
      count(after.ttft, { model: 'PV-TURBO' }) - count(start.ttft, { model: 'PV-TURBO' }),
      4,
      'every answer has a first token; the failure has none',
    );

    // Histograms use the SLA's fixed bounds, in seconds.
    assert.equal(family(after.parsed, 'pvai_request_duration_seconds').type, 'HISTOGRAM');
    const bounds = after.duration
      .filter((v) => nameOf(v).endsWith('_bucket') && v.labels.endpoint === 'createChatCompletion')
      .map((v) => v.labels.le);
    assert.deepEqual(
      bounds.slice(0, LATENCY_BOUNDS_MS.length),
      LATENCY_BOUNDS_MS.map((ms) => ms / 1000),
    );
    assert.equal(bounds.at(-1), '+Inf');

    // The capabilities' gauges are there (sandbox and local-engine queues, ingestion jobs).
    assert.equal(family(after.parsed, 'pvai_sandbox_queue').type, 'GAUGE');
    assert.equal(value(after.parsed, 'pvai_sandbox_queue', { state: 'queued' }), 0);
    assert.equal(value(after.parsed, 'pvai_local_engine_queue', { state: 'queued' }), 0);
    assert.equal(value(after.parsed, 'pvai_ingestion_jobs_processing'), 0);
    assert.equal(family(after.parsed, 'pvai_sandbox_executions_total').type, 'COUNTER');
    // The write-behind buffers: nothing pending, retried or spilled while the database answers.
    for (const name of [
      'pvai_write_behind_pending',
      'pvai_write_behind_retries_total',
      'pvai_write_behind_spilled_rows_total',
    ]) {
      const samples = family(after.parsed, name).metrics.map((m) => [m.labels?.kind, Number(m.value)]);
      assert.deepEqual(
        samples.sort(),
        [
          ['refunds', 0],
          ['sla', 0],
          ['usage', 0],
        ],
        name,
      );
    }

    // No label carries an account, a key or a user; every name follows the conventions.
    const secrets = [paid.accountId, paid.apiKey, free.accountId, free.apiKey, 'user-1'];
    for (const f of after.parsed) {
      assert.match(f.name, /^pvai_[a-z_]+(_total|_seconds|_queue|_processing|_open|_pending)$/, f.name);
      for (const m of f.metrics) {
        for (const [name, v] of Object.entries(m.labels ?? {})) {
          assert.ok(
            ['endpoint', 'model', 'status', 'kind', 'result', 'state', 'outcome', 'reason'].includes(name),
            name,
          );
          for (const secret of secrets) assert.ok(!v.includes(secret), `${f.name}{${name}} carries ${secret}`);
        }
      }
    }
    for (const secret of secrets) assert.ok(!after.text.includes(secret));
  });

  it('labels an endpoint outside the contract `other`, never with its path', async () => {
    const { apiKey } = await server.createAccount('startup', 10);
    const before = (await scrape()).parsed;
    const res = await fetch(`${server.url}/z1/no-such-thing-acct_123`, {
      headers: { Authorization: `Bearer ${apiKey}` },
    });
    assert.equal(res.status, 404);
    const after = await scrape();
    assert.ok(!after.text.includes('no-such-thing'));
    const other = (s: Scrape) =>
      family(s, 'pvai_requests_total')
        .metrics.filter((m) => m.labels?.endpoint === 'other')
        .reduce((a, m) => a + Number(m.value), 0);
    assert.ok(other(after.parsed) - other(before) <= 1);
  });
});
