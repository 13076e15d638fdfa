import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

describe('admin API', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer('sqlite');
  });
  after(() => server.close());

  it('creates an account with a first key shown once, and lists and reads it', async () => {
    const created = await server.request<{ account: Record<string, unknown>; api_key: string }>(
      'POST',
      '/admin/accounts',
      {
        admin: true,
        body: { email: 'ops@example.com', tier: 'startup', credits: 250, password: 'correct horse battery' },
      },
    );
    assert.equal(created.status, 201);
    assert.match(created.body.api_key, /^pv_sk_[0-9A-Za-z]{40}$/);
    assert.equal(created.body.account.tier, 'startup');
    assert.equal(created.body.account.credits, 250);
    const id = String(created.body.account.id);
    const got = await server.request('GET', `/admin/accounts/${id}`, { admin: true });
    assert.deepEqual(got.body, created.body.account);
    const list = await server.request<{ data: Array<{ id: string }> }>('GET', '/admin/accounts', { admin: true });
    assert.ok(list.body.data.some((a) => a.id === id));
    const rows = await server.running.runtime.db.query<{ password_hash: string }>(
      'SELECT password_hash FROM accounts WHERE id = $1',
      [id],
    );
    assert.match(rows[0]?.password_hash ?? '', /^scrypt\$/);
    assert.ok(!JSON.stringify(rows).includes('correct horse'));
  });

  it('changes the tier and adds credits', async () => {
    const { accountId } = await server.createAccount('free', 3);
    const tier = await server.request('PATCH', `/admin/accounts/${accountId}`, {
      admin: true,
      body: { tier: 'business' },
    });
    assert.equal(tier.body.tier, 'business');
    const credits = await server.request('POST', `/admin/accounts/${accountId}/credits`, {
      admin: true,
      body: { amount: 40 },
    });
    assert.equal(credits.body.credits, 43);
    const negative = await server.request('POST', `/admin/accounts/${accountId}/credits`, {
      admin: true,
      body: { amount: -5 },
    });
    assert.equal(negative.status, 400);
    assert.equal((negative.body.details as { field: string }).field, 'amount');
  });

  it('lists keys without their plaintext', async () => {
    const { accountId, apiKey } = await server.createAccount('free');
    const keys = await server.request<{ data: Array<Record<string, unknown>> }>(
      'GET',
      `/admin/accounts/${accountId}/keys`,
      {
        admin: true,
      },
    );
    assert.equal(keys.status, 200);
    assert.equal(keys.body.data.length, 1);
    assert.equal(keys.body.data[0]?.prefix, apiKey.slice(0, 12));
    assert.ok(!keys.text.includes(apiKey));
  });

  it('answers 404 for unknown accounts and keys, 409 for a duplicate email', async () => {
    assert.equal((await server.request('GET', '/admin/accounts/acct_nope', { admin: true })).status, 404);
    assert.equal((await server.request('DELETE', '/admin/keys/key_nope', { admin: true })).status, 404);
    assert.equal((await server.request('POST', '/admin/keys/key_nope/rotate', { admin: true })).status, 404);
    const body = { email: 'dup@example.com', tier: 'free' };
    assert.equal((await server.request('POST', '/admin/accounts', { admin: true, body })).status, 201);
    const dup = await server.request('POST', '/admin/accounts', { admin: true, body });
    assert.equal(dup.status, 409);
    assert.equal(dup.body.code, 'CONFLICT');
    const email = await server.request('POST', '/admin/accounts', {
      admin: true,
      body: { email: 'nope', tier: 'free' },
    });
    assert.equal(email.status, 400);
  });

  it('refuses a wrong admin token and API keys on /admin', async () => {
    const wrong = await server.request('GET', '/admin/accounts', {
      headers: { Authorization: 'Bearer not-the-token-at-all' },
    });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.code, 'UNAUTHORIZED');
    const { apiKey } = await server.createAccount('enterprise');
    const withKey = await server.request('GET', '/admin/accounts', { apiKey });
    assert.equal(withKey.status, 401);
  });
});

describe('admin API without PVAI_ADMIN_TOKEN', () => {
  it('is disabled with 503', async () => {
    const server = await startTestServer('sqlite', { config: { adminToken: undefined } });
    try {
      const res = await server.request('GET', '/admin/accounts', {
        headers: { Authorization: 'Bearer anything-at-all-here' },
      });
      assert.equal(res.status, 503);
      assert.equal(res.body.code, 'SERVICE_UNAVAILABLE');
    } finally {
      await server.close();
    }
  });
});

const CEILING = 1_000_000_000_000;

for (const backend of backends()) {
  describe(`credit balances past 2^31, up to the ceiling (${backend})`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(backend);
    });
    after(() => server.close());

    it('creates an account with 3,000,000,000 credits and reports that balance in GET /z1/usage', async () => {
      const { accountId, apiKey } = await server.createAccount('startup', 3_000_000_000);
      const account = await server.request('GET', `/admin/accounts/${accountId}`, { admin: true });
      assert.equal(account.body.credits, 3_000_000_000);
      const usage = await server.request<{ credits: { balance: number } }>('GET', '/z1/usage', { apiKey });
      assert.equal(usage.status, 200);
      assert.deepEqual(usage.body.credits, { balance: 3_000_000_000 });
    });

    it('refuses an account created above the ceiling with 400 INVALID_PARAMETER on credits', async () => {
      const over = await server.request('POST', '/admin/accounts', {
        admin: true,
        body: { email: `over-${backend}@example.com`, tier: 'free', credits: CEILING + 1 },
      });
      assert.equal(over.status, 400);
      assert.equal(over.body.code, 'INVALID_PARAMETER');
      assert.equal((over.body.details as { field: string }).field, 'credits');
      const at = await server.request<{ account: { credits: number } }>('POST', '/admin/accounts', {
        admin: true,
        body: { email: `at-${backend}@example.com`, tier: 'free', credits: CEILING },
      });
      assert.equal(at.status, 201);
      assert.equal(at.body.account.credits, CEILING);
    });

    it('refuses a grant that would pass the ceiling with 400 INVALID_PARAMETER on amount, adding nothing', async () => {
      const { accountId } = await server.createAccount('free', CEILING - 10);
      const credits = (amount: number) =>
        server.request('POST', `/admin/accounts/${accountId}/credits`, { admin: true, body: { amount } });
      const over = await credits(11);
      assert.equal(over.status, 400);
      assert.equal(over.body.code, 'INVALID_PARAMETER');
      assert.deepEqual(over.body.details, {
        field: 'amount',
        reason: `the balance would pass ${CEILING}`,
        max_balance: CEILING,
        balance: CEILING - 10,
      });
      const tooLargeAlone = await credits(CEILING + 1);
      assert.equal(tooLargeAlone.status, 400);
      assert.equal((tooLargeAlone.body.details as { field: string }).field, 'amount');
      const filled = await credits(10);
      assert.equal(filled.status, 200);
      assert.equal(filled.body.credits, CEILING);
      assert.equal((await credits(1)).status, 400);
      const account = await server.request('GET', `/admin/accounts/${accountId}`, { admin: true });
      assert.equal(account.body.credits, CEILING);
    });

    it('still answers 404 for a grant to an unknown account', async () => {
      const missing = await server.request('POST', '/admin/accounts/acct_nope/credits', {
        admin: true,
        body: { amount: 1 },
      });
      assert.equal(missing.status, 404);
    });
  });
}

for (const backend of backends()) {
  describe(`emails are one account whatever their case (${backend})`, () => {
    let server: TestServer;

    before(async () => {
      server = await startTestServer(backend);
    });
    after(() => server.close());

    const create = (email: string) =>
      server.request<{ account: { email: string } }>('POST', '/admin/accounts', {
        admin: true,
        body: { email, tier: 'free' },
      });

    it('stores the address in lower case and refuses it again in any case with 409', async () => {
      const created = await create('Dev.Ops@Example.COM');
      assert.equal(created.status, 201);
      assert.equal(created.body.account.email, 'dev.ops@example.com');
      for (const again of ['dev.ops@example.com', 'DEV.OPS@EXAMPLE.COM', 'dev.ops@EXAMPLE.com']) {
        const res = await create(again);
        assert.equal(res.status, 409, again);
        assert.deepEqual(res.body, {
          status: 'error',
          message: `An account with the email ${again.toLowerCase()} exists`,
          code: 'CONFLICT',
          details: { field: 'email' },
          error: {
            message: `An account with the email ${again.toLowerCase()} exists`,
            type: 'invalid_request_error',
            code: 'conflict',
            param: 'email',
          },
        });
      }
    });

    it('refuses an address that differs only in case from one stored before emails were lowered', async () => {
      await server.running.runtime.db.query(
        'INSERT INTO accounts (id, email, tier, credits, created_at) VALUES ($1, $2, $3, $4, $5)',
        ['acct_legacy_mixed_case', 'Legacy.User@Example.com', 'free', 0, Date.now()],
      );
      const res = await create('legacy.user@example.com');
      assert.equal(res.status, 409);
    });
  });
}
