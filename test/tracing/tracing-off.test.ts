import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { TRACING, tracingConfigured } from '../../src/tracing/index.js';
import { startResponses } from '../responses/support.js';

/** Every OTEL_* variable of this process, removed for the test and put back after. */
function withoutOtelEnv(): () => void {
  const saved = Object.entries(process.env).filter(([name]) => name.startsWith('OTEL_'));
  for (const [name] of saved) delete process.env[name];
  return () => {
    for (const [name, value] of saved) process.env[name] = value;
  };
}

const chat = (content: string) => ({
  model: 'PV-TURBO',
  user_id: 'alice',
  skip_cache: true,
  messages: [{ role: 'user', content }],
});

/**
 * Tracing is off unless an OTLP endpoint is configured: then the SDK never starts, an incoming traceparent goes
 * nowhere (no upstream receives one), and no answer names a trace.
 */
describe('tracing off (sqlite)', () => {
  let restore: () => void;
  before(() => {
    restore = withoutOtelEnv();
  });
  after(() => restore());

  it('is on only with an exporter endpoint, and not when disabled', () => {
    assert.equal(tracingConfigured({}), false);
    assert.equal(tracingConfigured({ OTEL_SERVICE_NAME: 'pvai', OTEL_TRACES_SAMPLER: 'always_on' }), false);
    assert.equal(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }), true);
    assert.equal(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }), true);
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    assert.equal(tracingConfigured({ ...endpoint, OTEL_SDK_DISABLED: 'true' }), false);
    assert.equal(tracingConfigured({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }), false);
  });

  it('with no OTEL_* set: no traceparent upstream, no trace id in a 5xx', async () => {
    const h = await startResponses('sqlite');
    try {
      assert.equal(TRACING.on, false);
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const ok = await h.server.request('POST', '/z1/chat/completions', {
        apiKey: h.apiKey,
        headers: { traceparent },
        body: chat('Hello?'),
      });
      assert.equal(ok.status, 200, ok.text);
      h.upstream.script({ kind: 'status', status: 500 });
      const failed = await h.server.request<{ details: Record<string, unknown> | null }>(
        'POST',
        '/z1/chat/completions',
        { apiKey: h.apiKey, headers: { traceparent }, body: chat('Hello again?') },
      );
      assert.equal(failed.status, 502, failed.text);
      assert.equal(failed.body.details?.trace_id, undefined);
      const calls = h.upstream.requests.filter((r) => r.path.endsWith('/chat/completions'));
      assert.equal(calls.length, 2);
      for (const call of calls) {
        assert.equal(call.headers.traceparent, undefined);
        assert.equal(call.headers.tracestate, undefined);
      }
    } finally {
      await h.close();
    }
  });

  it('with an endpoint but OTEL_SDK_DISABLED=true: the endpoint receives nothing', async () => {
    const received: string[] = [];
    const sink = createServer((req: IncomingMessage, res) => {
      received.push(`${req.method} ${req.url}`);
      res.end();
    });
    sink.listen(0, '127.0.0.1');
    await once(sink, 'listening');
    const { port } = sink.address() as AddressInfo;
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
    process.env.OTEL_BSP_SCHEDULE_DELAY = '50';
    process.env.OTEL_SDK_DISABLED = 'true';
    try {
      const h = await startResponses('sqlite');
      try {
        assert.equal(TRACING.on, false);
        const res = await h.server.request('POST', '/z1/chat/completions', {
          apiKey: h.apiKey,
          body: chat('Hello?'),
        });
        assert.equal(res.status, 200, res.text);
        assert.equal(h.upstream.requests.at(-1)?.headers.traceparent, undefined);
      } finally {
        await h.close();
      }
      // Well past the batch delay, and after the stop that would have flushed a batch.
      await sleep(300);
      assert.deepEqual(received, []);
    } finally {
      delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      delete process.env.OTEL_BSP_SCHEDULE_DELAY;
      delete process.env.OTEL_SDK_DISABLED;
      sink.close();
    }
  });
});
