import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { sqlitePath } from '../../src/storage/data-source.js';
import { backends, postgresOnly } from '../support/databases.js';
import { manualClock, type Response, startTestServer, type TestServer } from '../support/server.js';

for (const backend of backends()) {
  describe(`authentication (${backend})`, () => {
    let server: TestServer;
    let apiKey: string;
    let accountId: string;

    before(async () => {
      server = await startTestServer(backend, { config: { authFailuresPerMinute: 5 } });
      ({ apiKey, accountId } = await server.createAccount('startup'));
    });
    after(() => server.close());

    it('accepts the key as a Bearer token and as X-API-Key', async () => {
      const bearer = await server.request('GET', '/z1/models', { apiKey, auth: 'bearer' });
      assert.equal(bearer.status, 200);
      const header = await server.request('GET', '/z1/models', { apiKey, auth: 'header' });
      assert.equal(header.status, 200);
      assert.equal((header.body.data as unknown[]).length, 4);
    });

    it('answers 401 with the error body for a missing, malformed or unknown key', async () => {
      const variants: Array<Record<string, string>> = [
        {},
        { Authorization: 'Bearer nope' },
        { Authorization: `Basic ${apiKey}` },
        { 'X-API-Key': `pv_sk_${'A'.repeat(40)}` },
      ];
      for (const headers of variants) {
        const res = await server.request('GET', '/z1/models', { headers });
        assert.equal(res.status, 401, JSON.stringify(headers));
        assert.deepEqual(res.body, {
          status: 'error',
          message: 'Invalid or missing API key',
          code: 'UNAUTHORIZED',
          details: null,
          // As OpenAI's clients read it (they show error.message).
          error: {
            message: 'Invalid or missing API key',
            type: 'authentication_error',
            code: 'unauthorized',
            param: null,
          },
        });
        assert.equal(res.headers.get('x-ratelimit-limit'), null, 'no account, so no account limits');
      }
    });

    it('refuses a revoked key and accepts the rotated one', async () => {
      const created = await server.request<{ key: { id: string }; api_key: string }>(
        'POST',
        `/admin/accounts/${accountId}/keys`,
        { admin: true, body: { name: 'to-revoke' } },
      );
      assert.equal(created.status, 201);
      const key = created.body.api_key;
      assert.equal((await server.request('GET', '/z1/models', { apiKey: key })).status, 200);
      const revoked = await server.request('DELETE', `/admin/keys/${created.body.key.id}`, { admin: true });
      assert.equal(revoked.status, 200);
      assert.ok(revoked.body.revoked_at);
      const refused = await server.request('GET', '/z1/models', { apiKey: key });
      assert.equal(refused.status, 401);
      assert.equal(refused.body.code, 'UNAUTHORIZED');

      const rotated = await server.request<{ key: { id: string; name: string }; api_key: string }>(
        'POST',
        `/admin/keys/${created.body.key.id}/rotate`,
        { admin: true },
      );
      assert.equal(rotated.status, 201);
      assert.equal(rotated.body.key.name, 'to-revoke');
      assert.notEqual(rotated.body.api_key, key);
      assert.equal((await server.request('GET', '/z1/models', { apiKey: rotated.body.api_key })).status, 200);
    });

    it('stores keys only as SHA-256 hashes', async () => {
      const rows = await server.running.runtime.db.query<Record<string, unknown>>('SELECT * FROM api_keys');
      assert.ok(rows.length >= 1);
      const dump = JSON.stringify(rows);
      assert.ok(!dump.includes(apiKey), 'the plaintext key must not be stored');
      const hash = createHash('sha256').update(apiKey).digest('hex');
      assert.ok(rows.some((r) => r.key_hash === hash));
      for (const row of rows) {
        assert.match(String(row.key_hash), /^[0-9a-f]{64}$/);
        assert.match(String(row.prefix), /^pv_sk_[0-9A-Za-z]{6}$/);
      }
    });

    it('limits failed authentications per client address with 429', async () => {
      // 5 failures per minute are allowed in this server's configuration; earlier tests used some.
      let limited: Response | undefined;
      for (let i = 0; i < 10 && !limited; i++) {
        const res = await server.request('GET', '/z1/usage', { apiKey: `pv_sk_${'B'.repeat(40)}` });
        if (res.status === 429) limited = res;
        else assert.equal(res.status, 401);
      }
      assert.ok(limited, 'repeated failures must end in 429');
      assert.equal(limited.body.code, 'RATE_LIMIT_EXCEEDED');
      assert.ok(Number(limited.headers.get('retry-after')) >= 1);
      // A valid key from the same address still works: only failures are limited.
      assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200);
    });
  });
}

describe('resolved keys are reused for authCacheTtlMs', { skip: postgresOnly() }, () => {
  it('sees a revocation made by another replica within that time (PostgreSQL)', async () => {
    const clock = manualClock(Date.UTC(2026, 10, 21, 8, 0, 0));
    const server = await startTestServer('postgres', { clock, config: { authCacheTtlMs: 1000 } });
    try {
      const { apiKey, accountId } = await server.createAccount('startup');
      assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200);
      // Revoked behind this process's back, as another replica would.
      await server.running.runtime.db.query('UPDATE api_keys SET revoked_at = $1 WHERE account_id = $2', [
        clock(),
        accountId,
      ]);
      clock.advance(500);
      assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200, 'still cached');
      clock.advance(501);
      assert.equal(
        (await server.request('GET', '/z1/models', { apiKey })).status,
        401,
        'refused once the entry expires',
      );
    } finally {
      await server.close();
    }
  });
});

describe('resolved keys on embedded SQLite', () => {
  it('are reused past authCacheTtlMs, and a revocation by another connection (the CLI) applies within 50 ms', async () => {
    const clock = manualClock(Date.UTC(2026, 10, 21, 8, 0, 0));
    const server = await startTestServer('sqlite', { clock, config: { authCacheTtlMs: 1000 } });
    const cli = new Database(sqlitePath(server.running.runtime.config.dataDir));
    try {
      const { apiKey, accountId } = await server.createAccount('startup');
      const lookups = countKeyLookups(server);
      assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200);
      clock.advance(5000);
      assert.equal((await server.request('GET', '/z1/models', { apiKey })).status, 200);
      assert.equal(lookups.count, 1, 'the second request, 5 s later, was answered from the cache');
      cli.prepare('UPDATE api_keys SET revoked_at = ? WHERE account_id = ?').run(clock(), accountId);
      const revokedAt = performance.now();
      let status = 200;
      while (status === 200 && performance.now() - revokedAt < 2000) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        status = (await server.request('GET', '/z1/models', { apiKey })).status;
      }
      assert.equal(status, 401, 'refused once the change is noticed');
      // Polled every 50 ms; the margin is for a loaded CI machine.
      assert.ok(performance.now() - revokedAt < 1000, 'noticed well within a second');
    } finally {
      cli.close();
      await server.close();
    }
  });
});

/** Counts the server's key lookups in its store (the store still answers them). */
function countKeyLookups(server: TestServer): { count: number } {
  const store = server.running.runtime.accountStore;
  const lookUp = store.findActiveKeyByHash.bind(store);
  const counter = { count: 0 };
  store.findActiveKeyByHash = (hash) => {
    counter.count += 1;
    return lookUp(hash);
  };
  return counter;
}
