import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type ClientConnection, openConnection } from '../support/client-connection.js';
import { backends } from '../support/databases.js';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { requestHead } from '../support/raw-http.js';
import { chatBody, startTestServer, type TestServer } from '../support/server.js';

/**
 * The write deadline of streamed answers: a client that stops reading a stream larger than the socket
 * buffers is cut after `http.streamWriteTimeoutMs` (1 s here), its upstream request aborted, and its
 * usage row says the server cut it (408), not that it left (499). The upstream is a real local HTTP
 * server speaking the OpenAI wire format that streams 16 KB deltas for as long as it is read.
 */
const WRITE_TIMEOUT_MS = 1000;

for (const backend of backends()) {
  describe(`a stream whose client stops reading (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;
    let accountId: string;

    before(async () => {
      upstream = await startMockUpstream();
      // The upstream's own silence deadline is far away: only the write deadline can end these streams.
      const target = (model: string) => ({
        provider: 'openai-compatible' as const,
        baseUrl: upstream.url,
        model,
        timeoutMs: 120_000,
        maxRetries: 0,
      });
      server = await startTestServer(backend, {
        config: {
          http: { streamWriteTimeoutMs: WRITE_TIMEOUT_MS },
          routing: { 'PV-TURBO': [target('endless')], 'PV-STANDARD': [target('slow')] },
        },
      });
      ({ apiKey, accountId } = await server.createAccount('startup', 100));
    });
    after(async () => {
      await server.close();
      await upstream.close();
    });
    beforeEach(() => {
      upstream.reset();
      upstream.scriptModel('endless', { kind: 'endless' });
      upstream.scriptModel('slow', { kind: 'slow', chunks: ['one ', 'two ', 'three'], delayMs: 1200 });
    });

    const lastUsageRow = async () =>
      (
        await server.usageRows<{ status: number; endpoint: string }>(
          'SELECT status, endpoint FROM usage_records WHERE account_id = $1 ORDER BY id DESC LIMIT 1',
          [accountId],
        )
      )[0];

    /** A raw connection that has sent a streamed chat request for `model` and seen its first event. */
    async function streamingChat(model: string): Promise<ClientConnection> {
      const body = JSON.stringify(chatBody({ model, stream: true, skip_cache: true }));
      const connection = await openConnection(server.url);
      connection.send(
        requestHead('POST', '/z1/chat/completions', [
          `Authorization: Bearer ${apiKey}`,
          'Content-Type: application/json',
          `Content-Length: ${Buffer.byteLength(body)}`,
        ]) + body,
      );
      const head = await connection.waitForData((text) => text.includes('data: '));
      assert.match(head, /^HTTP\/1\.1 200 /);
      return connection;
    }

    it('cuts the connection, aborts the upstream request and records the cut as 408', async () => {
      const client = await streamingChat('PV-TURBO');
      // From here the client takes nothing: the kernel's buffers fill, then the server's.
      client.socket.pause();
      try {
        // Tens of MB pass before the buffers are full; then 1 to 1¼ s of stall. 30 s is a generous bound.
        await upstream.waitForDisconnects(1, 30_000);
        assert.equal(upstream.requests.length, 1);
        assert.equal(upstream.requests[0]?.clientDisconnected, true, 'the upstream saw its request aborted');

        // The server reset the connection: reading again, the client drains what was buffered, then sees its end.
        client.socket.resume();
        assert.ok(await client.closesWithin(10_000), 'the server closed the connection');
        assert.ok(!client.received().toString('latin1').includes('data: [DONE]'));

        const row = await eventually(lastUsageRow, (r) => r?.status === 408, 5000);
        assert.deepEqual(row, { status: 408, endpoint: 'createChatCompletion' });
        // The client's doing, not the service's: no error against availability.
        await server.running.runtime.sla.flush();
        type Sla = { models: Array<{ model: string; requests: number; errors: number }> };
        const sla = await server.request<Sla>('GET', '/z1/sla?window=1h', { apiKey });
        const turbo = sla.body.models.find((m) => m.model === 'PV-TURBO');
        assert.deepEqual({ requests: turbo?.requests, errors: turbo?.errors }, { requests: 1, errors: 0 });
      } finally {
        client.destroy();
      }
    });

    it('leaves alone a stream whose upstream is silent longer than the deadline while its client reads', async () => {
      // Events 1.2 s apart: the deadline counts a full buffer, not silence.
      const client = await streamingChat('PV-STANDARD');
      try {
        const text = await client.waitForData((t) => t.includes('data: [DONE]'), 20_000);
        assert.ok(text.includes('three'), text);
        assert.ok(!client.isClosed());
        const row = await eventually(lastUsageRow, (r) => r?.status === 200 && r.endpoint === 'createChatCompletion');
        assert.equal(row?.status, 200);
      } finally {
        client.destroy();
      }
    });
  });
}
