import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { type AccountStore, SqlAccountStore } from '../../src/accounts/index.js';
import { BufferedUsageStore } from '../../src/usage/index.js';
import { NOW, storageContracts } from './store-contracts.js';

/** The AccountStore and UsageStore contracts (the RateLimitStore's is in stores-rate-limits.test.ts). */
storageContracts((s) => {
  // On SQLite the server's ledger and the plain SQL store the CLI uses must both keep the contract.
  const accountStores: Array<[string, () => AccountStore]> =
    s.backend === 'sqlite'
      ? [
          ["the owner's credit ledger", () => s.accounts],
          ['plain SQL, as the CLI opens it', () => new SqlAccountStore(s.db)],
        ]
      : [['SQL', () => s.accounts]];
  for (const [variant, makeStore] of accountStores) {
    let current: AccountStore | undefined;
    const store = () => {
      current ??= makeStore();
      return current;
    };
    describe(`AccountStore (${variant})`, () => {
      after(async () => {
        if (current !== s.accounts) await current?.close();
      });
      it('creates, reads, lists and changes accounts', async () => {
        const a = await s.newAccount(5);
        assert.deepEqual(await store().getAccount(a.id), a);
        assert.ok((await store().listAccounts()).some((x) => x.id === a.id));
        assert.equal((await store().setTier(a.id, 'business'))?.tier, 'business');
        assert.equal((await store().addCredits(a.id, 7, 20))?.credits, 12);
        assert.equal(await store().addCredits(a.id, 9, 20), undefined, 'past the ceiling: nothing is added');
        assert.equal((await store().getAccount(a.id))?.credits, 12);
        assert.equal((await store().addCredits(a.id, 8, 20))?.credits, 20, 'up to the ceiling itself');
        assert.equal(await store().getAccount('acct_missing'), undefined);
        assert.equal(await store().setTier('acct_missing', 'free'), undefined);
      });

      it('finds an account by email with its password hash for sign-in, and sets a new hash', async () => {
        const a = await s.newAccount(3);
        const found = await store().findSignIn(a.email);
        assert.equal(found?.account.id, a.id);
        assert.equal(found?.passwordHash, null, 'created without a password');
        assert.equal(await store().setPasswordHash(a.id, 'scrypt$c2FsdA==$aGFzaA=='), true);
        assert.equal((await store().findSignIn(a.email))?.passwordHash, 'scrypt$c2FsdA==$aGFzaA==');
        assert.equal(await store().setPasswordHash('acct_missing', 'x'), false);
        assert.equal(await store().findSignIn('nobody@example.com'), undefined);
      });

      it('refuses a second account with the same email with CONFLICT', async () => {
        const a = await s.newAccount();
        await assert.rejects(
          store().createAccount({ email: a.email, tier: 'free', credits: 0, passwordHash: null }, NOW),
          (err: { code?: string }) => err.code === 'CONFLICT',
        );
      });

      it('never lets the balance go negative under 50 concurrent charges', async () => {
        const a = await s.newAccount(10);
        const results = await Promise.all(Array.from({ length: 50 }, () => store().chargeCredits(a.id, 1)));
        assert.equal(results.filter((r) => r.ok).length, 10);
        assert.equal((await store().getAccount(a.id))?.credits, 0);
        const refused = await store().chargeCredits(a.id, 1);
        assert.deepEqual(refused, { ok: false, balance: 0 });
      });

      it('charges in multiples without overdrawing and refunds', async () => {
        const a = await s.newAccount(12);
        const results = await Promise.all(Array.from({ length: 10 }, () => store().chargeCredits(a.id, 5)));
        assert.equal(results.filter((r) => r.ok).length, 2);
        assert.equal((await store().getAccount(a.id))?.credits, 2);
        await store().refundCredits(a.id, 5);
        assert.equal((await store().getAccount(a.id))?.credits, 7);
      });

      it('finds active keys by hash only, and not once revoked', async () => {
        const a = await s.newAccount();
        const key = {
          id: `key_${Math.random().toString(36).slice(2)}`,
          accountId: a.id,
          prefix: 'pv_sk_abcdef',
          name: 'k',
          userId: 'bound-user',
          createdAt: NOW,
          lastUsedAt: null,
          revokedAt: null,
        };
        // A hash of its own: every store variant runs this test on the same database.
        const hash = randomBytes(32).toString('hex');
        await store().insertKey(key, hash);
        const found = await store().findActiveKeyByHash(hash);
        assert.equal(found?.key.id, key.id);
        assert.equal(found?.key.userId, 'bound-user', 'the end user a key is bound to is read back with it');
        assert.equal(found?.account.id, a.id);
        await store().touchKey(key.id, NOW + 5);
        assert.equal((await store().getKey(key.id))?.lastUsedAt, NOW + 5);
        assert.equal((await store().revokeKey(key.id, NOW + 10))?.revokedAt, NOW + 10);
        assert.equal((await store().revokeKey(key.id, NOW + 20))?.revokedAt, NOW + 10, 'first revocation time kept');
        assert.equal(await store().findActiveKeyByHash(hash), undefined);
        assert.equal((await store().listKeys(a.id)).length, 1);
      });
    });
  }

  describe('BufferedUsageStore', () => {
    it('writes rows in batches and shows every recorded row to readers', async () => {
      const accountId = (await s.newAccount()).id;
      const buffered = new BufferedUsageStore(s.usage, { flushIntervalMs: 10_000, maxBatch: 1000 });
      const row = {
        accountId,
        keyId: null,
        requestId: 'b',
        endpoint: 'listModels',
        model: null,
        status: 200,
        promptTokens: 0,
        completionTokens: 0,
        credits: 0,
        latencyMs: 1,
        cached: false,
        createdAt: NOW,
      };
      await Promise.all(Array.from({ length: 120 }, (_, i) => buffered.record({ ...row, requestId: `b${i}` })));
      const direct = await s.usage.totals(accountId, NOW - 1, NOW + 1);
      assert.equal(direct.requests, 0, 'nothing written before the flush');
      assert.equal((await buffered.totals(accountId, NOW - 1, NOW + 1)).requests, 120, 'reads flush first');
      assert.equal((await s.usage.totals(accountId, NOW - 1, NOW + 1)).requests, 120);
    });
  });

  describe('UsageStore', () => {
    it('records rows and sums them per period, day and model', async () => {
      const accountId = (await s.newAccount()).id;
      const row = {
        accountId,
        keyId: null,
        requestId: 'req_1',
        endpoint: 'createChatCompletion',
        model: 'PV-TURBO',
        status: 200,
        promptTokens: 10,
        completionTokens: 5,
        credits: 1,
        latencyMs: 12.4,
        cached: false,
        createdAt: NOW,
      };
      await s.usage.record(row);
      await s.usage.record({ ...row, requestId: 'req_2', model: 'PV-CODEX', credits: 3, createdAt: NOW + 86_400_000 });
      await s.usage.record({
        ...row,
        requestId: 'req_3',
        status: 400,
        credits: 0,
        promptTokens: 0,
        completionTokens: 0,
      });
      const totals = await s.usage.totals(accountId, NOW - 1, NOW + 2 * 86_400_000);
      assert.deepEqual(totals, { requests: 3, credits: 4, promptTokens: 20, completionTokens: 10 });
      const byDay = await s.usage.series(accountId, NOW - 1, NOW + 2 * 86_400_000, 'day');
      assert.deepEqual(
        byDay.map((s) => [s.key, s.requests, s.credits]),
        [
          ['2026-11-21', 2, 1],
          ['2026-11-22', 1, 3],
        ],
      );
      const byModel = await s.usage.series(accountId, NOW - 1, NOW + 2 * 86_400_000, 'model');
      assert.deepEqual(
        byModel.map((s) => [s.key, s.requests]),
        [
          ['PV-CODEX', 1],
          ['PV-TURBO', 2],
        ],
      );
      await s.usage.recordMany([
        { ...row, requestId: 'req_4', createdAt: NOW + 1 },
        { ...row, requestId: 'req_5', createdAt: NOW + 2 },
      ]);
      assert.equal((await s.usage.totals(accountId, NOW - 1, NOW + 2 * 86_400_000)).requests, 5);
      const listed = await s.db.query<{ request_id: string; latency_ms: number }>(
        'SELECT request_id, latency_ms FROM usage_records WHERE account_id = $1 ORDER BY created_at DESC, id DESC',
        [accountId],
      );
      assert.equal(listed.length, 5);
      assert.equal(listed[0]?.request_id, 'req_2');
      assert.equal(Number(listed.find((r) => r.request_id === 'req_1')?.latency_ms), 12);
    });
  });
});
