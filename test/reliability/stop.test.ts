import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { backends, createTestDatabase, type TestDatabase } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { type ServerProcess, startServerProcess } from '../support/processes.js';
import { createAccount, serverEnv, stored, storedBalances } from '../support/reliability.js';

const PURCHASED = 100;

const chatBody = (stream: boolean) =>
  JSON.stringify({
    model: 'PV-TURBO',
    user_id: 'stop',
    skip_cache: true,
    stream,
    max_tokens: 64,
    messages: [{ role: 'user', content: 'a long answer, please' }],
  });

interface Outcome {
  status: number;
  headers: Headers;
  text: string;
}

/** A chat in flight: `started` once its first bytes arrived (a stream's first event), `done` with all of it. */
function chat(url: string, apiKey: string, stream: boolean): { started: Promise<void>; done: Promise<Outcome> } {
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const done = (async () => {
    const res = await fetch(`${url}/z1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: chatBody(stream),
    });
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body ?? []) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (text.includes('data: ')) markStarted();
    }
    markStarted();
    return { status: res.status, headers: res.headers, text };
  })();
  if (!stream) markStarted();
  return { started, done };
}

/** Whether a brand-new connection to the server is refused (ECONNREFUSED). */
function refusesNewConnections(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest(`${url}/z1/health`, { agent: false }, (res) => {
      res.resume();
      resolve(false);
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    req.end();
  });
}

async function eventuallyRefused(url: string, timeoutMs = 3000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await refusesNewConnections(url)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return false;
}

/** Resolves with the exit code and how long after `since` the process exited. */
async function exited(server: ServerProcess, since: number): Promise<{ code: number | null; ms: number }> {
  const [code] =
    server.child.exitCode !== null ? [server.child.exitCode] : ((await once(server.child, 'exit')) as [number | null]);
  return { code, ms: Date.now() - since };
}

/** A raw connection, for requests a fetch client cannot hold half-sent or keep idle on purpose. */
async function rawConnection(url: string): Promise<{ socket: Socket; received: () => string; closed: Promise<void> }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  let data = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    data += chunk;
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  return { socket, received: () => data, closed };
}

const lastEvent = (text: string) => {
  const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
  return events.at(-1)?.slice('data: '.length);
};

/**
 * SIGTERM to `pvai serve`, as an orchestrator stops a replica: no new connections, the requests in flight
 * finish (or, past the grace period, end with a 503 or a stream's final error event), everything written
 * behind is on disk, exit code 0 within a bounded time.
 */
for (const backend of backends())
  describe(`SIGTERM to pvai serve (${backend})`, () => {
    let upstream: MockUpstream;
    let database: TestDatabase;
    let server: ServerProcess | undefined;

    before(async () => {
      upstream = await startMockUpstream();
    });
    beforeEach(async () => {
      upstream.reset();
      database = await createTestDatabase(backend);
    });
    after(async () => {
      if (server?.child.exitCode === null) server.child.kill('SIGKILL');
      await upstream.close();
    });

    const usageRows = async (accountId: string) =>
      (
        await stored<{ status: number; credits: number }>(
          database,
          "SELECT status, credits FROM usage_records WHERE account_id = $1 AND endpoint = 'createChatCompletion' ORDER BY status",
          [accountId],
        )
      ).map((r) => ({ status: Number(r.status), credits: Number(r.credits) }));

    it('lets 8 chats in flight finish (4 streamed), refuses new connections, writes everything, exits 0', {
      timeout: 60_000,
    }, async () => {
      try {
        // Each answer takes about 2 s upstream (20 chunks, 100 ms apart): the stop begins while they run.
        upstream.scriptModel('mock-model', { kind: 'slow', chunks: Array(20).fill('word '), delayMs: 100 });
        server = await startServerProcess(serverEnv(database, upstream.url));
        const { accountId, apiKey } = await createAccount(server.url, 'startup', PURCHASED);
        // A client with an idle kept-alive connection (a load balancer's pool).
        const idle = await rawConnection(server.url);
        idle.socket.write('GET /z1/health HTTP/1.1\r\nHost: pvai\r\n\r\n');
        // A request whose headers are still arriving when the stop begins.
        const late = await rawConnection(server.url);

        const chats = [true, false, true, false, true, false, true, false].map((s) =>
          chat(server?.url ?? '', apiKey, s),
        );
        await Promise.all(chats.map((c) => c.started));
        while (upstream.requests.length < 8) await new Promise((r) => setTimeout(r, 10));
        assert.match(idle.received(), /^HTTP\/1.1 200/);
        late.socket.write('GET /z1/health/ready HTTP/1.1\r\nHost: pvai\r\n');

        const signalledAt = Date.now();
        server.child.kill('SIGTERM');
        assert.ok(await eventuallyRefused(server.url), 'new connections are refused');
        await Promise.race([
          idle.closed,
          new Promise((_, reject) => setTimeout(() => reject(new Error('idle connection left open')), 1000)),
        ]);
        late.socket.write('\r\n');

        const outcomes = await Promise.all(chats.map((c) => c.done));
        for (const [i, outcome] of outcomes.entries()) {
          assert.equal(outcome.status, 200, `chat ${i}`);
          if (i % 2 === 0) assert.equal(lastEvent(outcome.text), '[DONE]', `stream ${i} ends normally`);
          else {
            assert.equal(JSON.parse(outcome.text).choices[0].message.content.trim(), Array(20).fill('word').join(' '));
            assert.equal(outcome.headers.get('connection'), 'close', 'an answer during the stop closes its connection');
          }
        }
        const { code, ms } = await exited(server, signalledAt);
        assert.equal(code, 0);
        assert.ok(ms < 8000, `stopped ${ms} ms after SIGTERM, within the grace period`);
        await late.closed;
        assert.match(late.received(), /^HTTP\/1.1 503/, 'readiness says not ready while stopping');
        assert.match(late.received(), /connection: close/i);
        assert.match(late.received(), /"status":"not_ready"/);

        assert.equal((await storedBalances(database)).get(accountId), PURCHASED - 8, 'every charge is on disk');
        assert.deepEqual(await usageRows(accountId), Array(8).fill({ status: 200, credits: 1 }), 'every usage row too');
      } finally {
        await database.drop();
      }
    });

    it('past the grace period ends streams with a final error event and the others with 503, refunded', {
      timeout: 60_000,
    }, async () => {
      try {
        // Answers that take 20 s; the grace period is 600 ms.
        upstream.scriptModel('mock-model', { kind: 'slow', chunks: Array(200).fill('word '), delayMs: 100 });
        const graceMs = 600;
        server = await startServerProcess(
          serverEnv(database, upstream.url, {}, { PVAI_SHUTDOWN_GRACE_MS: String(graceMs) }),
        );
        const { accountId, apiKey } = await createAccount(server.url, 'startup', PURCHASED);
        const chats = [true, false, true, false, true, false].map((s) => chat(server?.url ?? '', apiKey, s));
        await Promise.all(chats.map((c) => c.started));
        while (upstream.requests.length < 6) await new Promise((r) => setTimeout(r, 10));

        const signalledAt = Date.now();
        server.child.kill('SIGTERM');
        const outcomes = await Promise.all(chats.map((c) => c.done));
        const { code, ms } = await exited(server, signalledAt);
        assert.equal(code, 0);
        assert.ok(ms >= graceMs, `waited the grace period (${ms} ms)`);
        assert.ok(ms < graceMs + 1000 + 3000, `stopped ${ms} ms after SIGTERM: grace + final answers + writes`);

        let charged = 0;
        for (const [i, outcome] of outcomes.entries()) {
          if (i % 2 === 0) {
            assert.equal(outcome.status, 200, `stream ${i} had started`);
            const last = JSON.parse(lastEvent(outcome.text) ?? '{}');
            assert.equal(last.status, 'error', `stream ${i} ends with a final error event`);
            assert.equal(last.code, 'SERVICE_UNAVAILABLE');
            charged += Number(outcome.headers.get('x-credits-charged'));
          } else {
            assert.equal(outcome.status, 503, `chat ${i}`);
            assert.equal(JSON.parse(outcome.text).code, 'SERVICE_UNAVAILABLE');
          }
        }
        await upstream.waitForDisconnects(6, 2000);
        assert.equal(charged, 3, 'a stream that started stays charged');
        const balance = (await storedBalances(database)).get(accountId);
        assert.equal(balance, PURCHASED - charged, 'the others were refunded, and every change is on disk');
        assert.deepEqual(await usageRows(accountId), [
          ...Array(3).fill({ status: 200, credits: 1 }),
          ...Array(3).fill({ status: 503, credits: 0 }),
        ]);
      } finally {
        await database.drop();
      }
    });

    it('a second signal ends the grace period at once', { timeout: 60_000 }, async () => {
      try {
        upstream.scriptModel('mock-model', { kind: 'slow', chunks: Array(200).fill('word '), delayMs: 100 });
        server = await startServerProcess(serverEnv(database, upstream.url, {}, { PVAI_SHUTDOWN_GRACE_MS: '60000' }));
        const { apiKey } = await createAccount(server.url, 'startup', PURCHASED);
        const stream = chat(server.url, apiKey, true);
        await stream.started;
        const signalledAt = Date.now();
        server.child.kill('SIGTERM');
        await new Promise((r) => setTimeout(r, 300));
        server.child.kill('SIGINT');
        const outcome = await stream.done;
        assert.equal(JSON.parse(lastEvent(outcome.text) ?? '{}').code, 'SERVICE_UNAVAILABLE');
        const { code, ms } = await exited(server, signalledAt);
        assert.equal(code, 0);
        assert.ok(ms < 5000, `stopped ${ms} ms after the first signal, not after 60 s`);
      } finally {
        await database.drop();
      }
    });
  });
