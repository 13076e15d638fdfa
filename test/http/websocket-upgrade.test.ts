import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ResponsesHarness, startResponses } from '../responses/support.js';
import { openConnection } from '../support/client-connection.js';
import { isErrorBody, rawExchange, requestHead } from '../support/raw-http.js';
import { responsesSocketUrl, TestSocket } from '../support/websocket.js';

/** A WebSocket handshake's request head (RFC 6455 §4.1), with `extra` headers. */
const handshake = (path: string, extra: string[] = [], method = 'GET') =>
  requestHead(method, path, [
    'Connection: Upgrade',
    'Upgrade: websocket',
    'Sec-WebSocket-Version: 13',
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
    ...extra,
  ]);

/**
 * The HTTP layer's WebSocket upgrades (http/upgrade.ts, http/socket-session.ts) on the Responses API's route: the
 * key checked before the upgrade as for any request, the socket counted against the connection caps, closed when
 * idle and by the graceful stop once its response is done.
 */
describe('WebSocket upgrades', () => {
  let h: ResponsesHarness;
  let url: string;

  before(async () => {
    h = await startResponses('sqlite', {
      defaultText: 'Paris is the capital of France.',
      config: { authFailuresPerMinute: 3, http: { maxConnectionsPerAddress: 2, keepAliveTimeoutMs: 1500 } },
    });
    url = responsesSocketUrl(h.server.url);
  });
  after(() => h?.close());

  it('refuses a bad key with 401 and the error body before the upgrade; the failures are counted (429)', async () => {
    const from = '127.0.0.9';
    for (const key of ['Authorization: Bearer pv_wrong', undefined, 'X-API-Key: pv_wrong']) {
      const connection = await openConnection(h.server.url, { from });
      connection.send(handshake('/z1/responses', key ? [key] : []));
      assert.ok(await connection.closesWithin(), 'closed after the answer');
      const [response] = connection.responses();
      assert.equal(response?.status, 401, connection.received().toString());
      assert.ok(isErrorBody(response?.body ?? ''), response?.body);
      assert.equal(JSON.parse(response?.body ?? '{}').error.type, 'authentication_error');
    }
    const refused = await TestSocket.refused(url, { Authorization: 'Bearer pv_wrong' }, from);
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, 'RATE_LIMIT_EXCEEDED');
  });

  it('two different credentials are ambiguous (400); X-API-Key alone opens the socket', async () => {
    const ambiguous = await TestSocket.refused(url, { Authorization: `Bearer ${h.apiKey}`, 'X-API-Key': 'pv_other' });
    assert.equal(ambiguous.status, 400);
    assert.equal(ambiguous.body.code, 'AMBIGUOUS_CREDENTIALS');
    const socket = await TestSocket.open(url, { 'X-API-Key': h.apiKey });
    const answer = await socket.turn({ type: 'response.create', model: 'PV-TURBO', input: 'Hi' });
    assert.equal(answer.at(-1)?.type, 'response.completed');
    await socket.close();
  });

  it('another path is 404, another method 405, a broken handshake 400, all with the error body; other upgrades are HTTP', async () => {
    const answers = [
      [handshake('/z1/chat/completions'), 404, 'NOT_FOUND'],
      [handshake('/z1/responses', [], 'POST'), 405, 'METHOD_NOT_ALLOWED'],
      [handshake('/z1/responses', ['Sec-WebSocket-Version: 7']), 400, 'MALFORMED_REQUEST'],
    ] as const;
    for (const [head, status, code] of answers) {
      const exchange = await rawExchange(h.server.url, [head], { responses: 1 });
      const [response] = exchange.responses;
      assert.equal(response?.status, status, JSON.stringify(exchange));
      assert.ok(isErrorBody(response?.body ?? ''), response?.body);
      assert.equal(JSON.parse(response?.body ?? '{}').code, code);
    }
    // curl --http2 on http:// asks for h2c: the server goes on in HTTP/1.1 (RFC 9110 §7.8).
    const h2c = await rawExchange(
      h.server.url,
      [requestHead('GET', '/z1/health', ['Connection: Upgrade, HTTP2-Settings', 'Upgrade: h2c', 'HTTP2-Settings: '])],
      { responses: 1 },
    );
    assert.equal(h2c.responses[0]?.status, 200, JSON.stringify(h2c));
  });

  it('an open socket counts against the caps and is never closed to make room, even one that was idle HTTP before', async () => {
    const from = '127.0.0.3';
    // One connection: an HTTP request, kept alive (idle), then upgraded.
    const upgraded = await openConnection(h.server.url, { from });
    upgraded.send(requestHead('GET', '/z1/health'));
    await upgraded.waitForResponses(1);
    upgraded.send(handshake('/z1/responses', [`Authorization: Bearer ${h.apiKey}`]));
    await upgraded.waitForData((text) => text.includes('HTTP/1.1 101'));
    const socket = await TestSocket.open(url, { Authorization: `Bearer ${h.apiKey}` }, from);

    const third = await openConnection(h.server.url, { from });
    third.send(requestHead('GET', '/z1/health'));
    const [refused] = await third.waitForResponses(1);
    assert.equal(refused?.status, 503);
    assert.equal(JSON.parse(refused?.body ?? '{}').code, 'TOO_MANY_CONNECTIONS');
    assert.equal(upgraded.isClosed(), false, 'the upgraded connection was not closed as idle');
    upgraded.destroy();
    await socket.close();
  });

  it('a socket with no message for http.keepAliveTimeoutMs is closed (1000)', async () => {
    const socket = await TestSocket.open(url, { Authorization: `Bearer ${h.apiKey}` });
    const answer = await socket.turn({ type: 'response.create', model: 'PV-TURBO', input: 'Hi' });
    assert.equal(answer.at(-1)?.type, 'response.completed');
    const started = Date.now();
    const closed = await socket.closed;
    assert.equal(closed.code, 1000);
    assert.ok(Date.now() - started >= 1000, `closed after ${Date.now() - started} ms`);
  });
});

describe('WebSockets at the graceful stop', () => {
  let h: ResponsesHarness;

  before(async () => {
    h = await startResponses('sqlite', { defaultText: 'Paris is the capital of France.' });
  });
  after(() => h?.close());

  it('an idle socket closes at once (1001); one with a response in hand closes once the response is done', async () => {
    const url = responsesSocketUrl(h.server.url);
    const idle = await TestSocket.open(url, { Authorization: `Bearer ${h.apiKey}` });
    const busy = await TestSocket.open(url, { Authorization: `Bearer ${h.apiKey}` });
    h.upstream.script({ kind: 'slow', chunks: ['one ', 'two ', 'three ', 'four'], delayMs: 150 });
    busy.ws.send(JSON.stringify({ type: 'response.create', model: 'PV-TURBO', input: 'Count.' }));
    assert.equal((await busy.next())?.type, 'response.created');

    const stopped = h.server.running.shutdown({ graceMs: 10_000 });
    assert.equal((await idle.closed).code, 1001);
    const answer = await busy.read();
    assert.equal(answer.at(-1)?.type, 'response.completed');
    const [message] = (answer.at(-1)?.response?.output ?? []) as Array<{ content: Array<{ text: string }> }>;
    assert.equal(message?.content[0]?.text, 'one two three four');
    assert.equal((await busy.closed).code, 1001);
    const report = await stopped;
    assert.equal(report.sockets, 2);
    assert.equal(report.socketsCut, 0);
  });
});

describe('WebSockets at a graceful stop whose grace runs out', () => {
  let h: ResponsesHarness;

  before(async () => {
    h = await startResponses('sqlite', { defaultText: 'Paris is the capital of France.' });
  });
  after(() => h?.close());

  it('a response still running at the deadline fails with the stop (503) on its socket, which then closes', async () => {
    const busy = await TestSocket.open(responsesSocketUrl(h.server.url), { Authorization: `Bearer ${h.apiKey}` });
    h.upstream.script({ kind: 'slow', chunks: Array.from({ length: 100 }, (_, i) => `w${i} `), delayMs: 100 });
    busy.ws.send(JSON.stringify({ type: 'response.create', model: 'PV-TURBO', input: 'Count.' }));
    assert.equal((await busy.next())?.type, 'response.created');
    const stopped = h.server.running.shutdown({ graceMs: 300 });
    const answer = await busy.read();
    const last = answer.at(-1);
    // As a stream over HTTP ends at the deadline: the response fails with the stop's 503.
    assert.equal(last?.type, 'response.failed', JSON.stringify(last));
    assert.equal((last?.response as { error?: { code: string } } | undefined)?.error?.code, 'service_unavailable');
    assert.equal((await busy.closed).code, 1001);
    assert.equal((await stopped).socketsCut, 0);
  });
});
