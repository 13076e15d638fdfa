import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';
import type { ErrorBody } from './support.js';

/** A server without an embedding model (none set up, none configured) has no PV-EMBED and says how to get one. */
for (const backend of backends()) {
  describe(`embeddings without an embedding model (${backend})`, () => {
    let server: TestServer;
    let apiKey: string;

    before(async () => {
      server = await startTestServer(backend); // a fresh data dir: no models/embedding/ in it
      ({ apiKey } = await server.createAccount('startup', 10));
    });
    after(() => server?.close());

    it('answers 503 SERVICE_UNAVAILABLE naming what to set up, charges nothing, and lists no PV-EMBED', async () => {
      const res = await server.request<ErrorBody>('POST', '/z1/embeddings', {
        apiKey,
        body: { model: 'PV-EMBED', input: 'The cat sits on the mat.' },
      });
      assert.equal(res.status, 503, res.text);
      assert.equal(res.body.code, 'SERVICE_UNAVAILABLE');
      assert.match(res.body.message, /no embedding model/);
      assert.match(res.body.message, /scripts\/setup/);
      const usage = await server.request<{ credits: { balance: number } }>('GET', '/z1/usage', { apiKey });
      assert.equal(usage.body.credits.balance, 10);
      const list = await server.request<{ data: Array<{ id: string }> }>('GET', '/z1/models', { apiKey });
      assert.deepEqual(
        list.body.data.map((m) => m.id),
        ['PV-TURBO', 'PV-STANDARD', 'PV-ADVANCED', 'PV-CODEX'],
      );
      const one = await server.request('GET', '/z1/models/PV-EMBED', { apiKey });
      assert.equal(one.status, 404);
    });
  });
}
