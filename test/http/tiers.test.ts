import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chatBody, startTestServer, type TestServer } from '../support/server.js';

describe('tier rules', () => {
  let server: TestServer;
  let free: string;
  let startup: string;

  before(async () => {
    server = await startTestServer('sqlite');
    free = (await server.createAccount('free', 100)).apiKey;
    startup = (await server.createAccount('startup', 100)).apiKey;
  });
  after(() => server.close());

  it('refuses PV-ADVANCED and PV-CODEX on the free tier with 403 MODEL_NOT_ALLOWED', async () => {
    for (const model of ['PV-ADVANCED', 'PV-CODEX']) {
      const res = await server.request('POST', '/z1/chat/completions', { apiKey: free, body: chatBody({ model }) });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'MODEL_NOT_ALLOWED');
      assert.equal((res.body.details as { model: string }).model, model);
    }
    const allowed = await server.request('POST', '/z1/chat/completions', {
      apiKey: startup,
      body: chatBody({ model: 'PV-ADVANCED' }),
    });
    assert.notEqual(allowed.status, 403);
  });

  it('marks models unavailable to the tier in GET /z1/models', async () => {
    const res = await server.request<{ data: Array<{ id: string; available: boolean; credits_per_request: number }> }>(
      'GET',
      '/z1/models',
      { apiKey: free },
    );
    const byId = Object.fromEntries(res.body.data.map((m) => [m.id, m]));
    assert.equal(byId['PV-TURBO']?.available, true);
    assert.equal(byId['PV-STANDARD']?.available, true);
    assert.equal(byId['PV-ADVANCED']?.available, false);
    assert.deepEqual(
      res.body.data.map((m) => m.credits_per_request),
      [1, 2, 5, 3],
    );
    const one = await server.request('GET', '/z1/models/PV-CODEX', { apiKey: startup });
    assert.equal(one.status, 200);
    assert.equal(one.body.available, true);
    const none = await server.request('GET', '/z1/models/PV-NOPE', { apiKey: startup });
    assert.equal(none.status, 404);
  });

  it('caps rag_k at the tier maximum with RAG_K_EXCEEDS_TIER and details.max', async () => {
    const over = await server.request('POST', '/z1/chat/completions', { apiKey: free, body: chatBody({ rag_k: 6 }) });
    assert.equal(over.status, 400);
    assert.equal(over.body.code, 'RAG_K_EXCEEDS_TIER');
    assert.equal((over.body.details as { max: number }).max, 5);
    const startupOver = await server.request('POST', '/z1/chat/completions', {
      apiKey: startup,
      body: chatBody({ rag_k: 11 }),
    });
    assert.equal((startupOver.body.details as { max: number }).max, 10);
    const atMax = await server.request('POST', '/z1/chat/completions', { apiKey: free, body: chatBody({ rag_k: 5 }) });
    assert.notEqual(atMax.body.code, 'RAG_K_EXCEEDS_TIER');
  });

  it('caps the code timeout at the tier maximum with TIMEOUT_EXCEEDS_TIER', async () => {
    const over = await server.request('POST', '/z1/code/execute', {
      apiKey: free,
      body: { code: 'print(1)', user_id: 'u', timeout: 6 },
    });
    assert.equal(over.status, 400);
    assert.equal(over.body.code, 'TIMEOUT_EXCEEDS_TIER');
    assert.equal((over.body.details as { max: number }).max, 5);
    const startupOk = await server.request('POST', '/z1/code/execute', {
      apiKey: startup,
      body: { code: 'print(1)', user_id: 'u', timeout: 15 },
    });
    assert.notEqual(startupOk.body.code, 'TIMEOUT_EXCEEDS_TIER');
  });

  it('keeps the SLA endpoint from the free tier with 403 FEATURE_NOT_ALLOWED', async () => {
    const res = await server.request('GET', '/z1/sla', { apiKey: free });
    assert.equal(res.status, 403);
    assert.equal(res.body.code, 'FEATURE_NOT_ALLOWED');
    const paid = await server.request('GET', '/z1/sla?window=1h', { apiKey: startup });
    assert.notEqual(paid.status, 403);
  });

  it('answers 402 INSUFFICIENT_CREDITS when the balance is below the model price', async () => {
    const { apiKey } = await server.createAccount('startup', 4);
    const res = await server.request('POST', '/z1/chat/completions', {
      apiKey,
      body: chatBody({ model: 'PV-ADVANCED' }),
    });
    assert.equal(res.status, 402);
    assert.equal(res.body.code, 'INSUFFICIENT_CREDITS');
    assert.deepEqual(res.body.details, { required: 5, balance: 4 });
  });
});
