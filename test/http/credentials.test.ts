import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isErrorBody, rawExchange, requestHead } from '../support/raw-http.js';
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../support/server.js';

/**
 * One credential per request: two different keys (in the two headers, or one header repeated) are
 * refused with 400 AMBIGUOUS_CREDENTIALS before either is checked, whichever of them is valid.
 * Repeated headers go over a raw socket: fetch would join them into one.
 */
describe('ambiguous credentials', () => {
  let server: TestServer;
  let apiKey: string;
  let otherKey: string;
  const wrongKey = `pv_sk_${'W'.repeat(40)}`;

  before(async () => {
    server = await startTestServer('sqlite', { config: { authFailuresPerMinute: 3 } });
    ({ apiKey } = await server.createAccount('startup'));
    ({ apiKey: otherKey } = await server.createAccount('startup'));
  });
  after(() => server.close());

  /** GET /z1/models with these header lines, over a raw socket. */
  async function models(headerLines: string[]) {
    const exchange = await rawExchange(server.url, [
      requestHead('GET', '/z1/models', [...headerLines, 'Connection: close']),
    ]);
    const [response] = exchange.responses;
    assert.ok(response, JSON.stringify(exchange));
    return { status: response.status, body: JSON.parse(response.body) as Record<string, unknown>, text: response.body };
  }

  function assertAmbiguous(res: { status: number; body: Record<string, unknown>; text: string }) {
    assert.equal(res.status, 400, res.text);
    assert.ok(isErrorBody(res.text));
    assert.equal(res.body.code, 'AMBIGUOUS_CREDENTIALS');
  }

  it('refuses a valid Bearer beside a wrong X-API-Key', async () => {
    const res = await models([`Authorization: Bearer ${apiKey}`, `X-API-Key: ${wrongKey}`]);
    assertAmbiguous(res);
    assert.deepEqual(res.body.details, { headers: ['authorization', 'x-api-key'] });
  });

  it('refuses a wrong Bearer beside a valid X-API-Key', async () => {
    assertAmbiguous(await models([`Authorization: Bearer ${wrongKey}`, `X-API-Key: ${apiKey}`]));
  });

  it('refuses two valid keys of different accounts', async () => {
    assertAmbiguous(await models([`Authorization: Bearer ${apiKey}`, `X-API-Key: ${otherKey}`]));
  });

  it('refuses two Authorization headers with different keys, the valid one first or last', async () => {
    assertAmbiguous(await models([`Authorization: Bearer ${apiKey}`, `Authorization: Bearer ${wrongKey}`]));
    assertAmbiguous(await models([`Authorization: Bearer ${wrongKey}`, `Authorization: Bearer ${apiKey}`]));
  });

  it('refuses two X-API-Key headers with different keys', async () => {
    assertAmbiguous(await models([`X-API-Key: ${apiKey}`, `X-API-Key: ${wrongKey}`]));
  });

  it('refuses a Basic Authorization beside a valid X-API-Key', async () => {
    assertAmbiguous(await models(['Authorization: Basic dXNlcjpwYXNz', `X-API-Key: ${apiKey}`]));
  });

  it('accepts the same key in both headers, and the same header twice', async () => {
    assert.equal((await models([`Authorization: Bearer ${apiKey}`, `X-API-Key: ${apiKey}`])).status, 200);
    assert.equal((await models([`Authorization: Bearer ${apiKey}`, `Authorization: bearer ${apiKey}`])).status, 200);
  });

  it('counts an empty header as absent', async () => {
    assert.equal((await models([`Authorization: Bearer ${apiKey}`, 'X-API-Key: '])).status, 200);
  });

  it('does not count ambiguous requests as failed authentications', async () => {
    for (let i = 0; i < 5; i++)
      assertAmbiguous(await models([`Authorization: Bearer ${wrongKey}`, `X-API-Key: ${apiKey}`]));
    assert.equal((await models([`Authorization: Bearer ${apiKey}`])).status, 200, 'no 429 for this address');
  });

  it('applies to the admin API too, and not to operations without security', async () => {
    const admin = await rawExchange(server.url, [
      requestHead('GET', '/admin/accounts', [
        `Authorization: Bearer ${ADMIN_TOKEN}`,
        `X-API-Key: ${apiKey}`,
        'Connection: close',
      ]),
    ]);
    assert.equal(admin.responses[0]?.status, 400);
    assert.equal(JSON.parse(admin.responses[0]?.body ?? '{}').code, 'AMBIGUOUS_CREDENTIALS');
    const health = await rawExchange(server.url, [
      requestHead('GET', '/z1/health', [
        `Authorization: Bearer ${apiKey}`,
        `X-API-Key: ${wrongKey}`,
        'Connection: close',
      ]),
    ]);
    assert.equal(health.responses[0]?.status, 200);
  });

  it('answers through the contract: 400 is documented where the ambiguity can arise', async () => {
    const res = await server.request('GET', '/z1/models', { apiKey, headers: { 'X-API-Key': wrongKey } });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'AMBIGUOUS_CREDENTIALS');
  });
});
