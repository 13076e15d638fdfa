import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isErrorBody, type RawExchange, rawExchange, requestHead, type Step } from '../support/raw-http.js';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../support/server.js';

/**
 * Slowloris and friends: clients that hold a connection open by sending nothing, headers that never
 * end, a body that never ends or trickles in a byte at a time. Each is cut off at its configured bound
 * (short ones here, seconds by default) with 408 and the error body, and the connection is closed.
 * Node's own deadlines are checked once a second, so each bound holds within about a second.
 */
const TIMEOUTS = { headersTimeoutMs: 600, requestTimeoutMs: 2000, bodyIdleTimeoutMs: 400, keepAliveTimeoutMs: 500 };
const CHECK_SLACK_MS = 1500;

describe('slow clients', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer('sqlite', { config: { http: TIMEOUTS } });
  });
  after(() => server.close());

  function timedOut(exchange: RawExchange) {
    assert.equal(exchange.responses.length, 1, JSON.stringify(exchange));
    const [response] = exchange.responses;
    assert.ok(response);
    assert.equal(response.status, 408);
    assert.ok(isErrorBody(response.body), response.body);
    assert.equal((JSON.parse(response.body) as { code: string }).code, 'REQUEST_TIMEOUT');
    assert.equal(response.headers.connection, 'close');
    assert.ok(exchange.closedByServer, 'the server closed the connection');
    return response;
  }

  const createAccount = (body: string) =>
    requestHead('POST', '/admin/accounts', [
      'Content-Type: application/json',
      `Authorization: Bearer ${ADMIN_TOKEN}`,
      `Content-Length: ${Buffer.byteLength(body)}`,
    ]);

  it('closes a connection that sends nothing, with 408, after the headers timeout', async () => {
    const exchange = await rawExchange(server.url, [], { timeoutMs: 10_000 });
    timedOut(exchange);
    assert.ok(exchange.ms >= TIMEOUTS.headersTimeoutMs - 50, `${exchange.ms} ms`);
    assert.ok(exchange.ms < TIMEOUTS.headersTimeoutMs + CHECK_SLACK_MS, `${exchange.ms} ms`);
  });

  it('cuts off headers sent a byte every 100 ms, with 408, after the headers timeout', async () => {
    const head = requestHead('GET', '/z1/health', ['X-Padding: slowly, slowly, slowly']);
    const steps: Step[] = [...head].flatMap((char) => [char, { wait: 100 }]);
    const exchange = await rawExchange(server.url, steps, { timeoutMs: 10_000 });
    timedOut(exchange);
    assert.ok(exchange.ms < TIMEOUTS.headersTimeoutMs + CHECK_SLACK_MS, `${exchange.ms} ms`);
  });

  it('answers a body that never arrives with 408 after the pause limit', async () => {
    const exchange = await rawExchange(server.url, [createAccount('{"email":"never@example.com","tier":"free"}')], {
      timeoutMs: 10_000,
    });
    const response = timedOut(exchange);
    assert.deepEqual(JSON.parse(response.body).details, { timeout_ms: 400, received_bytes: 0 });
    assert.ok(exchange.ms >= TIMEOUTS.bodyIdleTimeoutMs - 50 && exchange.ms < 1500, `${exchange.ms} ms`);
  });

  it('answers a body that stops half way with 408 after the pause limit', async () => {
    const body = '{"email":"half@example.com","tier":"free"}';
    const exchange = await rawExchange(server.url, [createAccount(body), body.slice(0, 10)], { timeoutMs: 10_000 });
    const response = timedOut(exchange);
    assert.equal(JSON.parse(response.body).details.received_bytes, 10);
  });

  it('cuts off a body trickled a byte every 300 ms (under the pause limit) at the request timeout', async () => {
    const body = JSON.stringify({ email: 'trickle@example.com', tier: 'free', credits: 1, password: 'x'.repeat(40) });
    const steps: Step[] = [createAccount(body), ...[...body].flatMap((char) => [char, { wait: 300 }])];
    const exchange = await rawExchange(server.url, steps, { timeoutMs: 15_000 });
    timedOut(exchange);
    assert.ok(exchange.ms >= TIMEOUTS.requestTimeoutMs - 50, `${exchange.ms} ms`);
    assert.ok(exchange.ms < TIMEOUTS.requestTimeoutMs + CHECK_SLACK_MS, `${exchange.ms} ms`);
  });

  it('drops the rest of a refused body no longer than the request timeout, then closes without a second answer', async () => {
    const exchange = await rawExchange(
      server.url,
      [
        requestHead('POST', '/z1/chat/completions', ['Content-Type: text/plain', 'Content-Length: 100000']),
        'still sending',
      ],
      { timeoutMs: 10_000 },
    );
    assert.equal(exchange.responses.length, 1, JSON.stringify(exchange));
    assert.equal(exchange.responses[0]?.status, 415);
    assert.ok(exchange.closedByServer);
    // Whichever comes first: the keep-alive timeout while the rest stalls (here), or the request timeout.
    assert.ok(exchange.ms < TIMEOUTS.requestTimeoutMs + CHECK_SLACK_MS, `${exchange.ms} ms`);
  });

  it('closes an idle keep-alive connection after the keep-alive timeout', async () => {
    const exchange = await rawExchange(server.url, [requestHead('GET', '/z1/health')], { timeoutMs: 10_000 });
    assert.equal(exchange.responses[0]?.status, 200);
    assert.ok(exchange.closedByServer);
    assert.ok(exchange.ms >= TIMEOUTS.keepAliveTimeoutMs - 50 && exchange.ms < 3000, `${exchange.ms} ms`);
  });

  it('serves a client that is slow but within every bound', async () => {
    const body = '{"email":"patient@example.com","tier":"free"}';
    const exchange = await rawExchange(
      server.url,
      [createAccount(body), { wait: 250 }, body.slice(0, 20), { wait: 250 }, body.slice(20)],
      { responses: 1, timeoutMs: 10_000 },
    );
    assert.equal(exchange.responses[0]?.status, 201, exchange.responses[0]?.body);
  });

  it('holds many slow connections at once and stays responsive to others', async () => {
    const stalled = Array.from({ length: 50 }, () =>
      rawExchange(server.url, [createAccount('{"email":"x@example.com"}'), '{'], { timeoutMs: 10_000 }),
    );
    const health = await rawExchange(server.url, [requestHead('GET', '/z1/health', ['Connection: close'])]);
    assert.equal(health.responses[0]?.status, 200);
    assert.ok(health.ms < 500, `the health check took ${health.ms} ms`);
    for (const exchange of await Promise.all(stalled)) timedOut(exchange);
  });
});
