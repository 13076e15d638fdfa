import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { pino } from 'pino';
import { ConnectionLimits, connectionCaps, parseFdSoftLimit } from '../../src/http/connection-limits.js';
import { addressBucket } from '../../src/kernel/index.js';
import { type ClientConnection, openConnection } from '../support/client-connection.js';
import { backends } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { isErrorBody, type RawResponse, requestHead } from '../support/raw-http.js';
import { ADMIN_TOKEN, chatBody, startTestServer, type TestServer } from '../support/server.js';

/**
 * The connection caps over real sockets. Linux loopback answers from any 127.x address, so one test is
 * several clients: `openConnection(url, { from: '127.0.0.2' })`.
 */

const GET_HEALTH_AND_CLOSE = requestHead('GET', '/z1/health', ['Connection: close']);

/** A connection from `from` that sent one request and read its answer: kept alive, idle. */
async function idleConnection(url: string, from: string, path = '/z1/health'): Promise<ClientConnection> {
  const connection = await openConnection(url, { from });
  connection.send(requestHead('GET', path));
  const [response] = await connection.waitForResponses(1);
  assert.equal(response?.status, 200);
  return connection;
}

/** The one response of a connection the server refused: 503 TOO_MANY_CONNECTIONS, then closed. */
async function refusal(connection: ClientConnection): Promise<{ limit: string; max_connections: number }> {
  assert.ok(await connection.closesWithin(), 'the refused connection is closed');
  const responses = connection.responses();
  assert.equal(responses.length, 1, connection.received().toString('latin1'));
  const response = responses[0] as RawResponse;
  assert.equal(response.status, 503);
  assert.ok(isErrorBody(response.body), response.body);
  assert.equal(response.headers.connection, 'close');
  assert.equal(response.headers['retry-after'], '1');
  const body = JSON.parse(response.body) as { code: string; details: { limit: string; max_connections: number } };
  assert.equal(body.code, 'TOO_MANY_CONNECTIONS');
  return body.details;
}

/** A counter's value in the exposition text, for exactly these labels. */
function metric(text: string, name: string, labels: Record<string, string> = {}): number {
  const family = parsePrometheusTextFormat(text).find((f) => f.name === name);
  assert.ok(family, `${name} is exposed`);
  const sample = family.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample ? Number(sample.value) : 0;
}

/** GET /metrics over its own connection, closed after (so the scrape leaves no idle connection behind). */
async function scrape(url: string, from = '127.0.0.1'): Promise<string> {
  const connection = await openConnection(url, { from });
  connection.send(requestHead('GET', '/metrics', ['Connection: close']));
  const [response] = await connection.waitForResponses(1);
  assert.equal(response?.status, 200);
  return response.body;
}

describe('connection caps: settings', () => {
  it('read the soft "Max open files" of /proc/self/limits', () => {
    const limits = [
      'Limit                     Soft Limit           Hard Limit           Units     ',
      'Max processes             63704                63704                processes ',
      'Max open files            4096                 524288               files     ',
    ].join('\n');
    assert.equal(parseFdSoftLimit(limits), 4096);
    assert.equal(
      parseFdSoftLimit('Max open files            unlimited            unlimited            files'),
      Infinity,
    );
    assert.equal(parseFdSoftLimit('Max processes 10 10 processes'), undefined);
  });

  it('keep the total to half of the descriptors past the reserve, whatever is configured', () => {
    const settings = { maxConnectionsPerAddress: 256, connectionFdReserve: 256 };
    const known = (limit: number) => ({ limit, known: true });
    assert.equal(connectionCaps({ ...settings, maxConnections: 'auto' }, known(4096)).total, 1920);
    assert.equal(connectionCaps({ ...settings, maxConnections: 500 }, known(4096)).total, 500);
    const lowered = connectionCaps({ ...settings, maxConnections: 100_000 }, known(4096));
    assert.deepEqual([lowered.total, lowered.lowered], [1920, true]);
    // A limit below the reserve still leaves a few connections.
    assert.equal(connectionCaps({ ...settings, maxConnections: 'auto' }, known(100)).total, 16);
  });

  it('count an IPv6 client by its /64 and an IPv4 client by its address', () => {
    assert.equal(addressBucket('203.0.113.7'), '203.0.113.7');
    assert.equal(addressBucket('::ffff:203.0.113.7'), '203.0.113.7', 'an IPv4 client on a dual-stack socket is itself');
    assert.equal(addressBucket('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressBucket('2001:DB8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
    assert.equal(addressBucket('2001:db8::1'), '2001:db8:0:0::/64');
    assert.equal(addressBucket('::1'), '0:0:0:0::/64');
  });
});

describe('connection caps: one connection per address, on a bare Node server', () => {
  it('keeps counting an address whose last idle connection made room for its next', async () => {
    const limits = new ConnectionLimits(
      { total: 100, perAddress: 1, fdLimit: 1024, fdLimitKnown: true, lowered: false },
      { logger: pino({ level: 'silent' }) },
    );
    const server = createServer(limits.track((_req, res) => res.end('ok')));
    limits.attach(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const opened: ClientConnection[] = [];
    try {
      const first = await idleConnection(url, '127.0.0.6', '/');
      const second = await idleConnection(url, '127.0.0.6', '/');
      opened.push(first, second);
      assert.ok(await first.closesWithin(), 'the first made room for the second');
      // A silent third takes the idle second's place; a fourth finds no idle connection to close.
      const third = await openConnection(url, { from: '127.0.0.6' });
      opened.push(third);
      assert.ok(await second.closesWithin(), 'the second made room for the third');
      const fourth = await openConnection(url, { from: '127.0.0.6' });
      opened.push(fourth);
      assert.deepEqual(await refusal(fourth), { limit: 'per_address', max_connections: 1 });
      assert.ok(!third.isClosed());
      assert.equal(limits.open, 1);
    } finally {
      for (const connection of opened) connection.destroy();
      server.closeAllConnections();
      server.close();
    }
  });
});

for (const backend of backends()) {
  describe(`connection caps: per address (${backend})`, () => {
    const PER_ADDRESS = 4;
    let server: TestServer;
    let apiKey: string;

    before(async () => {
      // A headers deadline longer than the test: the flood's silent connections stay open throughout.
      server = await startTestServer(backend, {
        config: { http: { maxConnectionsPerAddress: PER_ADDRESS, headersTimeoutMs: 30_000 } },
      });
      ({ apiKey } = await server.createAccount('startup'));
    });
    after(() => server.close());

    it('refuses the surplus of one address with 503 TOO_MANY_CONNECTIONS, serves the others, and counts it', async () => {
      const before = metric(await scrape(server.url), 'pvai_connections_refused_total', { reason: 'per_address' });
      // A flood from 127.0.0.2 that never sends a request: its first 4 connections are held, the rest refused.
      const held: ClientConnection[] = [];
      for (let i = 0; i < PER_ADDRESS; i++) held.push(await openConnection(server.url, { from: '127.0.0.2' }));
      const surplus: ClientConnection[] = [];
      for (let i = 0; i < 3; i++) surplus.push(await openConnection(server.url, { from: '127.0.0.2' }));
      try {
        for (const connection of surplus) {
          assert.deepEqual(await refusal(connection), { limit: 'per_address', max_connections: PER_ADDRESS });
        }
        assert.ok(
          held.every((c) => !c.isClosed()),
          'the first four stay open',
        );

        // Everyone else is served as before.
        assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200);
        assert.equal((await server.request('GET', '/z1/health')).status, 200);

        const text = await scrape(server.url);
        assert.equal(metric(text, 'pvai_connections_refused_total', { reason: 'per_address' }), before + 3);
        assert.ok(metric(text, 'pvai_connections_open') >= PER_ADDRESS, 'the gauge counts the held connections');

        // The flood's address gets room again as its connections close.
        held.pop()?.destroy();
        const served = await eventually(
          async () => {
            const connection = await openConnection(server.url, { from: '127.0.0.2' });
            connection.send(GET_HEALTH_AND_CLOSE);
            await connection.closesWithin();
            return connection.responses()[0]?.status;
          },
          (status) => status === 200,
          5000,
        );
        assert.equal(served, 200);
      } finally {
        for (const connection of [...held, ...surplus]) connection.destroy();
      }
    });

    it('makes room for an address at its cap by closing its own connection idle longest', async () => {
      const before = metric(await scrape(server.url), 'pvai_idle_connections_closed_total', { reason: 'per_address' });
      const idle: ClientConnection[] = [];
      for (let i = 0; i < PER_ADDRESS; i++) idle.push(await idleConnection(server.url, '127.0.0.5'));
      try {
        const next = await idleConnection(server.url, '127.0.0.5');
        idle.push(next);
        await idle[0]?.closesWithin();
        assert.deepEqual(
          idle.map((c) => c.isClosed()),
          [true, false, false, false, false],
        );
        const text = await scrape(server.url);
        assert.equal(metric(text, 'pvai_idle_connections_closed_total', { reason: 'per_address' }), before + 1);
      } finally {
        for (const connection of idle) connection.destroy();
      }
    });
  });
}

for (const backend of backends()) {
  describe(`connection caps: in total (${backend})`, () => {
    const TOTAL = 5;
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;

    before(async () => {
      upstream = await startMockUpstream();
      // No per-address cap (as behind a proxy): every connection here comes from 127.0.0.1.
      server = await startTestServer(backend, {
        config: {
          http: { maxConnections: TOTAL, maxConnectionsPerAddress: 0, headersTimeoutMs: 30_000 },
          routing: { 'PV-TURBO': [{ provider: 'openai-compatible', baseUrl: upstream.url, model: 'slow' }] },
        },
      });
      // Over a connection closed after: an idle keep-alive connection of the test's own would be evicted first.
      const body = JSON.stringify({ email: 'caps@example.com', tier: 'startup', credits: 100 });
      const admin = await openConnection(server.url);
      admin.send(
        requestHead('POST', '/admin/accounts', [
          `Authorization: Bearer ${ADMIN_TOKEN}`,
          'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(body)}`,
          'Connection: close',
        ]) + body,
      );
      const [created] = await admin.waitForResponses(1);
      assert.equal(created?.status, 201, created?.body);
      apiKey = (JSON.parse(created.body) as { api_key: string }).api_key;
      await admin.closed;
    });
    after(async () => {
      await server.close();
      await upstream.close();
    });

    /** Waits until the server counts exactly `n` open connections (its own gauge, read in process). */
    const openCount = (n: number) =>
      eventually(
        async () => {
          const gauge = server.running.runtime.metrics.registry.getSingleMetric('pvai_connections_open');
          return (await gauge?.get())?.values[0]?.value;
        },
        (value) => value === n,
      );

    it('closes the idle keep-alive connections longest idle to make room, never one with a request in flight', async () => {
      // A chat stream that lasts ~8 s holds one connection with a request in flight throughout; the
      // connection was kept alive after an earlier answer, so it was the one idle longest before.
      upstream.scriptModel('slow', {
        kind: 'slow',
        chunks: Array.from({ length: 40 }, (_, i) => `w${i} `),
        delayMs: 200,
      });
      const body = JSON.stringify(chatBody({ stream: true, skip_cache: true }));
      const streaming = await idleConnection(server.url, '127.0.0.1');
      streaming.send(
        requestHead('POST', '/z1/chat/completions', [
          `Authorization: Bearer ${apiKey}`,
          'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(body)}`,
        ]) + body,
      );
      await streaming.waitForData((text) => text.includes('data: '));
      const idle: ClientConnection[] = [];
      for (let i = 0; i < TOTAL - 1; i++) idle.push(await idleConnection(server.url, '127.0.0.1'));
      assert.equal(await openCount(TOTAL), TOTAL);
      const fresh: ClientConnection[] = [];
      try {
        // At the cap: each new connection is served, and the connection idle longest is closed for it.
        const served = [await idleConnection(server.url, '127.0.0.1'), await idleConnection(server.url, '127.0.0.1')];
        await Promise.all([idle[0]?.closesWithin(), idle[1]?.closesWithin()]);
        assert.deepEqual(
          idle.map((c) => c.isClosed()),
          [true, true, false, false],
        );
        // Connections that send nothing yet are not idle: four of them take the last four idle ones' place…
        for (let i = 0; i < TOTAL - 1; i++) fresh.push(await openConnection(server.url));
        await Promise.all([...idle, ...served].map((c) => c.closesWithin()));
        assert.equal(await openCount(TOTAL), TOTAL);
        // …and with no idle connection left, the next one is refused.
        const refused = await openConnection(server.url);
        assert.deepEqual(await refusal(refused), { limit: 'total', max_connections: TOTAL });

        // The stream was never touched: it ends with [DONE] on its own connection.
        assert.ok(!streaming.isClosed(), 'the connection with a request in flight is open');
        await streaming.waitForData((text) => text.includes('data: [DONE]'), 20_000);
        assert.ok(
          fresh.every((c) => !c.isClosed()),
          'the silent connections were not closed either',
        );
        for (const connection of fresh) connection.destroy();
        streaming.destroy();
        assert.equal(await openCount(0), 0);

        const text = await scrape(server.url);
        assert.equal(metric(text, 'pvai_connections_refused_total', { reason: 'total' }), 1);
        assert.equal(metric(text, 'pvai_idle_connections_closed_total', { reason: 'total' }), 6);
        assert.equal(metric(text, 'pvai_connections_refused_total', { reason: 'per_address' }), 0);
      } finally {
        streaming.destroy();
        for (const connection of [...idle, ...fresh]) connection.destroy();
      }
    });
  });
}
