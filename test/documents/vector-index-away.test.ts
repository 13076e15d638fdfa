import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { qdrantAvailable, startQdrant } from '../support/qdrant.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Qdrant stopped under a running server: searching documents is 503 naming the vector index (with
 * Retry-After), never a 500, while chat goes on; readiness reports it without taking the replica out.
 */
describe('the vector index away', { skip: qdrantAvailable() ? false : 'no Qdrant binary' }, () => {
  let server: TestServer;
  let stopQdrant: () => Promise<void>;

  before(async () => {
    const qdrant = await startQdrant();
    stopQdrant = qdrant.stop;
    server = await startTestServer('sqlite', { config: { qdrantUrl: qdrant.url } });
  });
  after(async () => {
    await server.close();
    await stopQdrant();
  });

  it('answers a search 503 with the engine and Retry-After, and readiness names it', async () => {
    const { apiKey } = await server.createAccount('enterprise', 1000);
    const stored = await server.request('POST', '/z1/rag/documents', {
      apiKey,
      body: { user_id: 'u1', title: 'hours', content: 'The shop opens at nine and closes at five on weekdays.' },
    });
    assert.equal(stored.status, 201, stored.text);
    const before = await server.request('POST', '/z1/rag/search', { apiKey, body: { user_id: 'u1', query: 'opens' } });
    assert.equal(before.status, 200, before.text);

    await stopQdrant();
    const search = await server.request<{ code: string; details: { engine: string } }>('POST', '/z1/rag/search', {
      apiKey,
      body: { user_id: 'u1', query: 'when does the shop open' },
    });
    assert.equal(search.status, 503, search.text);
    assert.equal(search.body.code, 'SERVICE_UNAVAILABLE');
    assert.equal(search.body.details.engine, 'vector index');
    assert.equal(search.headers.get('retry-after'), '1');

    const ready = await server.request<{ status: string; checks: Record<string, { ok: boolean }> }>(
      'GET',
      '/z1/health/ready',
    );
    assert.equal(ready.body.checks.vector_index?.ok, false, ready.text);
    assert.equal(ready.body.checks.database?.ok, true);
  });
});
