import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { loadConfig } from '../../src/config/index.js';
import { chatRequests, type ResponsesHarness, startResponses } from '../responses/support.js';
import { openaiClient } from '../support/openai-client.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * A route may set the temperature of requests that name none (docs/routing.md): the upstream is asked at it, the
 * Responses API echoes it, and a request's own temperature still wins. Storage plays no part: SQLite only.
 */
describe("a route's default temperature", () => {
  /** A server on the contract's defaults, with its mock upstream; `routed` shares that upstream on a route at 0.2. */
  let plain: ResponsesHarness;
  let routed: TestServer;
  let routedClient: OpenAI;

  before(async () => {
    plain = await startResponses('sqlite', { defaultText: 'Hi.' });
    const target = { provider: 'openai-compatible' as const, baseUrl: plain.upstream.url, model: 'up', maxRetries: 0 };
    routed = await startTestServer('sqlite', {
      config: { tiers: { business: { rpm: 10_000 } }, routing: { 'PV-TURBO': [{ ...target, temperature: 0.2 }] } },
    });
    routedClient = openaiClient(routed.url, (await routed.createAccount('business', 1000)).apiKey);
  });
  after(async () => {
    await routed?.close();
    await plain?.close();
  });
  beforeEach(() => plain.upstream.reset());

  const upstreamTemperatures = () =>
    chatRequests(plain.upstream).map((r) => (r as unknown as { temperature?: number }).temperature);

  it('chat completions naming no temperature are sampled at the route’s; one naming it keeps its own', async () => {
    const named = await routedClient.chat.completions.create({
      model: 'PV-TURBO',
      user: 'u',
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    assert.equal(named.choices[0]?.message.content, 'Hi.');
    await routedClient.chat.completions.create({
      model: 'PV-TURBO',
      user: 'u',
      temperature: 1.1,
      messages: [{ role: 'user', content: 'Hello again' }],
    });
    assert.deepEqual(upstreamTemperatures(), [0.2, 1.1]);
  });

  it('a response naming no temperature is sampled at the route’s and echoes it; the contract’s 0.7 elsewhere', async () => {
    const atRoute = await routedClient.responses.create({ model: 'PV-TURBO', input: 'Hello' });
    assert.equal(atRoute.temperature, 0.2);
    const own = await routedClient.responses.create({ model: 'PV-TURBO', input: 'Hello', temperature: 0.9 });
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
