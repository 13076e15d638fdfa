import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { chatRequests, type ResponsesHarness, startResponses } from '../responses/support.js';
import { openaiClient } from '../support/openai-client.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A route may set the temperature of requests that name none (docs/routing.md): the upstream is asked at it, the
 * Responses API echoes it, and a request's own temperature still wins. Storage plays no part: SQLite only.
 */
describe("a route's default temperature", () => {
  let h: ResponsesHarness;
  let plain: ResponsesHarness;
  let routed: TestServer;

  before(async () => {
    plain = await startResponses('sqlite', { defaultText: 'Hi.' });
    h = await startResponses('sqlite', { defaultText: 'Hi.' });
    // The same upstream, on a route that says the temperature of requests naming none.
    const target = { provider: 'openai-compatible' as const, baseUrl: h.upstream.url, model: 'up', maxRetries: 0 };
    await h.server.close();
    routed = await startTestServer('sqlite', {
      config: { tiers: { business: { rpm: 10_000 } }, routing: { 'PV-TURBO': [{ ...target, temperature: 0.2 }] } },
    });
    h.server = routed;
    const account = await routed.createAccount('business', 1000);
    h.apiKey = account.apiKey;
    h.client = openaiClient(routed.url, account.apiKey);
  });
  after(async () => {
    // h.close() closes the server the harness started (closed above) and its upstream; this one is ours.
    await routed?.close();
    await h?.close();
    await plain?.close();
  });
  beforeEach(() => {
    h.upstream.reset();
    plain.upstream.reset();
  });

  const upstreamTemperatures = () =>
    [...chatRequests(h.upstream), ...chatRequests(plain.upstream)].map(
      (r) => (r as unknown as { temperature?: number }).temperature,
    );

  it('chat completions naming no temperature are sampled at the route’s; one naming it keeps its own', async () => {
    const named = await h.client.chat.completions.create({
      model: 'PV-TURBO',
      user: 'u',
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    assert.equal(named.choices[0]?.message.content, 'Hi.');
    await h.client.chat.completions.create({
      model: 'PV-TURBO',
      user: 'u',
      temperature: 1.1,
      messages: [{ role: 'user', content: 'Hello again' }],
    });
    assert.deepEqual(upstreamTemperatures(), [0.2, 1.1]);
  });

  it('a response naming no temperature is sampled at the route’s and echoes it; the contract’s 0.7 elsewhere', async () => {
    const routed = await h.client.responses.create({ model: 'PV-TURBO', input: 'Hello' });
    assert.equal(routed.temperature, 0.2);
    const own = await h.client.responses.create({ model: 'PV-TURBO', input: 'Hello', temperature: 0.9 });
    assert.equal(own.temperature, 0.9);
    const contract = await plain.client.responses.create({ model: 'PV-TURBO', input: 'Hello' });
    assert.equal(contract.temperature, 0.7);
    assert.deepEqual(upstreamTemperatures(), [0.2, 0.9, 0.7]);
  });

  it('the config refuses a temperature outside 0–2, naming it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'pvai-config-')), 'pvai.yaml');
    writeFileSync(file, 'routing:\n  PV-TURBO:\n    - { provider: local, temperature: 3 }\n');
    assert.throws(() => loadConfig({ PVAI_CONFIG: file }), /routing\.PV-TURBO\.0\.temperature/);
    writeFileSync(file, 'routing:\n  PV-TURBO:\n    - { provider: local, temperature: 0.2 }\n');
    assert.equal(loadConfig({ PVAI_CONFIG: file }).routing['PV-TURBO']?.[0]?.temperature, 0.2);
  });
});
