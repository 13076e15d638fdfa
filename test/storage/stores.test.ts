import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import {
  type AccountStore,
  CreditLedgerAccountStore,
  createAccountStore,
  SqlAccountStore,
} from '../../src/accounts/index.js';
import { InProcessRateLimitStore } from '../../src/limits/adapters/in-process-rate-limit-store.js';
import { SqliteWindowsPersistence } from '../../src/limits/adapters/sqlite-windows-persistence.js';
import { createRateLimitStore } from '../../src/limits/index.js';
import type { RateLimitStore } from '../../src/limits/types.js';
import { SqlMemoryStore } from '../../src/memory/index.js';
import { openDb, sqlitePath } from '../../src/storage/data-source.js';
import type { Db } from '../../src/storage/db.js';
import { EXTERNAL_CHANGE_POLL_MS } from '../../src/storage/index.js';
import { BufferedUsageStore, SqlUsageStore } from '../../src/usage/index.js';
import { backends, createTestDatabase, type TestDatabase } from '../support/databases.js';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

/** One contract per storage port; every adapter (SQLite, PostgreSQL) must pass all of it. */
for (const backend of backends()) {
  describe(`storage contracts (${backend})`, () => {
    let database: TestDatabase;
    let db: Db;
    let accounts: AccountStore;
    let limits: RateLimitStore;
    let usage: SqlUsageStore;

    before(async () => {
      database = await createTestDatabase(backend);
      // Opened as the server opens it: on SQLite the owner keeps limits and credits in memory.
      db = await openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, owner: true });
      accounts = createAccountStore(db);
      limits = createRateLimitStore(db);
      usage = new SqlUsageStore(db);
    });
    after(async () => {
      await limits.close();
      await accounts.close();
      await db.close();
      await database.drop();
    });

    const newAccount = (credits = 0) =>
      accounts.createAccount(
        { email: `${Math.random().toString(36).slice(2)}@example.com`, tier: 'free', credits, passwordHash: null },
        NOW,
      );

    // On SQLite the server's ledger and the plain SQL store the CLI uses must both keep the contract.
    const accountStores: Array<[string, () => AccountStore]> =
      backend === 'sqlite'
        ? [
            ["the owner's credit ledger", () => accounts],
            ['plain SQL, as the CLI opens it', () => new SqlAccountStore(db)],
          ]
        : [['SQL', () => accounts]];
    for (const [variant, makeStore] of accountStores) {
      let current: AccountStore | undefined;
      const store = () => {
        current ??= makeStore();
        return current;
      };
      describe(`AccountStore (${variant})`, () => {
        after(async () => {
          if (current !== accounts) await current?.close();
        });
        it('creates, reads, lists and changes accounts', async () => {
          const a = await newAccount(5);
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
          const a = await newAccount(3);
          const found = await store().findSignIn(a.email);
          assert.equal(found?.account.id, a.id);
          assert.equal(found?.passwordHash, null, 'created without a password');
          assert.equal(await store().setPasswordHash(a.id, 'scrypt$c2FsdA==$aGFzaA=='), true);
          assert.equal((await store().findSignIn(a.email))?.passwordHash, 'scrypt$c2FsdA==$aGFzaA==');
          assert.equal(await store().setPasswordHash('acct_missing', 'x'), false);
          assert.equal(await store().findSignIn('nobody@example.com'), undefined);
        });

        it('refuses a second account with the same email with CONFLICT', async () => {
          const a = await newAccount();
          await assert.rejects(
            store().createAccount({ email: a.email, tier: 'free', credits: 0, passwordHash: null }, NOW),
            (err: { code?: string }) => err.code === 'CONFLICT',
          );
        });

        it('never lets the balance go negative under 50 concurrent charges', async () => {
          const a = await newAccount(10);
          const results = await Promise.all(Array.from({ length: 50 }, () => store().chargeCredits(a.id, 1)));
          assert.equal(results.filter((r) => r.ok).length, 10);
          assert.equal((await store().getAccount(a.id))?.credits, 0);
          const refused = await store().chargeCredits(a.id, 1);
          assert.deepEqual(refused, { ok: false, balance: 0 });
        });

        it('charges in multiples without overdrawing and refunds', async () => {
          const a = await newAccount(12);
          const results = await Promise.all(Array.from({ length: 10 }, () => store().chargeCredits(a.id, 5)));
          assert.equal(results.filter((r) => r.ok).length, 2);
          assert.equal((await store().getAccount(a.id))?.credits, 2);
          await store().refundCredits(a.id, 5);
          assert.equal((await store().getAccount(a.id))?.credits, 7);
        });

        it('finds active keys by hash only, and not once revoked', async () => {
          const a = await newAccount();
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

    describe('RateLimitStore', () => {
      const rules = { rpm: 10, rpd: 15, monthly: 20 };

      it('admits exactly the remaining requests under 50 concurrent admissions', async () => {
        const id = (await newAccount()).id;
        const results = await Promise.all(Array.from({ length: 50 }, () => limits.admit(id, rules, NOW)));
        assert.equal(results.filter((r) => r.admitted).length, 10);
      });

      it('slides the minute window and keeps day and month counts', async () => {
        const id = (await newAccount()).id;
        for (let i = 0; i < 10; i++) assert.ok((await limits.admit(id, rules, NOW + i * 1000)).admitted);
        const full = await limits.admit(id, rules, NOW + 10_000);
        assert.equal(full.admitted, false);
        assert.equal(full.minuteCount, 10);
        assert.equal(full.minuteOldest, NOW);
        const later = await limits.admit(id, rules, NOW + 60_001);
        assert.equal(later.admitted, true);
        assert.equal(later.minuteCount, 9);
        assert.equal(later.dayCount, 10);
        assert.equal(later.monthCount, 10);
      });

      it('does not count when consume is false', async () => {
        const id = (await newAccount()).id;
        await limits.admit(id, rules, NOW);
        const peek = await limits.peek(id, rules, NOW + 1);
        const again = await limits.peek(id, rules, NOW + 2);
        assert.equal(peek.minuteCount, 1);
        assert.equal(again.minuteCount, 1);
        assert.equal(again.dayCount, 1);
      });

      it('starts a new day and month at UTC boundaries', async () => {
        const id = (await newAccount()).id;
        const lateNov30 = Date.UTC(2026, 10, 30, 23, 59, 30);
        await limits.admit(id, rules, lateNov30);
        const dec1 = await limits.admit(id, rules, Date.UTC(2026, 11, 1, 0, 0, 31));
        assert.equal(dec1.dayCount, 0);
        assert.equal(dec1.monthCount, 0);
      });

      it('keeps every window across a restart of the store', async () => {
        const id = (await newAccount()).id;
        for (let i = 0; i < 3; i++) await limits.admit(id, rules, NOW + i * 1000);
        await limits.close();
        limits = createRateLimitStore(db);
        const after = await limits.peek(id, rules, NOW + 3000);
        assert.deepEqual(
          { minute: after.minuteCount, oldest: after.minuteOldest, day: after.dayCount, month: after.monthCount },
          { minute: 3, oldest: NOW, day: 3, month: 3 },
        );
        // The sliding minute still slides after the restart: the first admission leaves it at NOW + 60 s.
        const slid = await limits.admit(id, rules, NOW + 60_500);
        assert.equal(slid.minuteCount, 2);
        assert.equal(slid.dayCount, 3);
        await limits.close();
        limits = createRateLimitStore(db);
        const again = await limits.peek(id, rules, NOW + 60_600);
        assert.equal(again.minuteCount, 3, 'two survivors plus the admission made before the second restart');
        assert.equal(again.dayCount, 4);
      });

      it('stores every admission of a turn, and deletes the times the minute has left by close', async () => {
        const [a, b] = [(await newAccount()).id, (await newAccount()).id];
        const stored = async (id: string) =>
          (
            await db.query<{ at_ms: number | string }>(
              `SELECT at_ms FROM rate_limit_events WHERE account_id = $1 ORDER BY at_ms`,
              [id],
            )
          ).map((r) => Number(r.at_ms));
        // 23 admissions in one turn over two accounts: more rows than one statement size takes.
        const wide = { rpm: 100, rpd: 100, monthly: 100 };
        await Promise.all(Array.from({ length: 23 }, (_, i) => limits.admit(i % 2 ? b : a, wide, NOW + i)));
        await limits.admit(a, wide, NOW + 61_000);
        await limits.close();
        assert.equal((await stored(b)).length, 11, 'every admission of the turn, each its own time');
        assert.deepEqual(await stored(a), [NOW + 61_000], 'the times before the minute are gone once closed');
        limits = createRateLimitStore(db);
        const after = await limits.peek(a, wide, NOW + 61_001);
        assert.deepEqual([after.minuteCount, after.dayCount], [1, 13]);
      });

      it('counts a clock that moved back and keeps it across a restart', async () => {
        const id = (await newAccount()).id;
        await limits.admit(id, rules, NOW + 5000);
        await limits.admit(id, rules, NOW + 1000);
        await limits.close();
        limits = createRateLimitStore(db);
        const after = await limits.peek(id, rules, NOW + 6000);
        assert.equal(after.minuteCount, 2);
        assert.equal(after.minuteOldest, NOW + 1000);
      });
    });

    if (backend === 'sqlite') {
      describe('embedded ownership', () => {
        it('refuses a second owner of the database while the first holds it', async () => {
          await assert.rejects(
            openDb({ dataDir: database.dataDir, owner: true }),
            /another pvai server is already using .*pvai\.sqlite/,
          );
        });

        const storedCredits = (id: string) => {
          const other = new Database(sqlitePath(database.dataDir), { readonly: true });
          try {
            return (other.prepare('SELECT credits FROM accounts WHERE id = ?').pluck().get(id) as number) ?? -1;
          } finally {
            other.close();
          }
        };

        it('stores a charge before it resolves, and uses credits another connection (the CLI) added once noticed', async () => {
          const a = await newAccount(3);
          assert.ok(accounts instanceof CreditLedgerAccountStore, 'the owner of an embedded database keeps a ledger');
          const cli = new Database(sqlitePath(database.dataDir));
          try {
            assert.equal((await accounts.chargeCredits(a.id, 2)).ok, true);
            assert.equal(storedCredits(a.id), 1, 'on disk once the charge resolved');
            assert.equal((await accounts.getAccount(a.id))?.credits, 1);
            assert.equal((await accounts.chargeCredits(a.id, 2)).ok, false, 'never below zero');
            cli.prepare('UPDATE accounts SET credits = credits + 10 WHERE id = ?').run(a.id);
            await new Promise((resolve) => setTimeout(resolve, 3 * EXTERNAL_CHANGE_POLL_MS));
            const charge = await accounts.chargeCredits(a.id, 2);
            assert.deepEqual(charge, { ok: true, balance: 9 }, "the CLI's credits count once noticed");
            assert.equal(storedCredits(a.id), 9);
            await accounts.refundCredits(a.id, 2);
            assert.equal(storedCredits(a.id), 11, 'a refund too is on disk once it resolved');
          } finally {
            cli.close();
          }
        });

        it("knows its users' memory versions, and rereads them once another connection (the CLI) committed", async () => {
          const memories = new SqlMemoryStore(db);
          const tenant = { accountId: (await newAccount()).id, userId: 'ada' };
          assert.equal(await memories.version(tenant), '0', 'no memories: version 0');
          await memories.bumpVersion(tenant);
          const own = await memories.version(tenant);
          assert.notEqual(own, '0', 'its own write is known at once');
          const cli = new Database(sqlitePath(database.dataDir));
          try {
            cli
              .prepare('UPDATE memory_user_versions SET version = ? WHERE account_id = ? AND user_id = ?')
              .run('from-the-cli', tenant.accountId, tenant.userId);
            await new Promise((resolve) => setTimeout(resolve, 3 * EXTERNAL_CHANGE_POLL_MS));
            assert.equal(await memories.version(tenant), 'from-the-cli', "the other connection's change, once noticed");
          } finally {
            cli.close();
          }
          await memories.deleteTenant(tenant);
          assert.equal(await memories.version(tenant), '0', 'erased: version 0 again');
        });

        it('writes the charges of one event-loop turn in one transaction', async () => {
          const a = await newAccount(100);
          const inner = new SqlAccountStore(db);
          const writes: number[] = [];
          const write = inner.writeCreditDeltas.bind(inner);
          inner.writeCreditDeltas = (deltas) => {
            writes.push(deltas.length);
            write(deltas);
          };
          const ledger = new CreditLedgerAccountStore(inner);
          try {
            const b = await newAccount(100);
            await ledger.getAccount(a.id);
            const results = await Promise.all(
              Array.from({ length: 40 }, (_, i) => ledger.chargeCredits(i % 2 ? a.id : b.id, 1)),
            );
            assert.ok(results.every((r) => r.ok));
            assert.deepEqual(writes, [2], 'one transaction, one delta per account');
            assert.deepEqual([storedCredits(a.id), storedCredits(b.id)], [80, 80]);
          } finally {
            await ledger.close();
          }
        });

        it('refuses a charge it could not store, and takes nothing', async () => {
          const a = await newAccount(10);
          const inner = new SqlAccountStore(db);
          const write = inner.writeCreditDeltas.bind(inner);
          let failures = 1;
          inner.writeCreditDeltas = (deltas) => {
            if (failures-- > 0) throw new Error('disk I/O error');
            write(deltas);
          };
          const errors: unknown[] = [];
          const ledger = new CreditLedgerAccountStore(inner, { onError: (err) => errors.push(err) });
          try {
            await assert.rejects(ledger.chargeCredits(a.id, 4), (err: { code?: string }) => {
              return err.code === 'SERVICE_UNAVAILABLE';
            });
            assert.equal(errors.length, 1, 'the failure is reported');
            assert.equal((await ledger.getAccount(a.id))?.credits, 10, 'the refused charge is undone');
            assert.deepEqual(await ledger.chargeCredits(a.id, 4), { ok: true, balance: 6 });
            assert.equal(storedCredits(a.id), 6);
          } finally {
            await ledger.close();
          }
        });

        it("writes a turn's admissions and charges in one transaction, and rolls both back together", async () => {
          const a = await newAccount(100);
          const rules = { rpm: 100, rpd: 100, monthly: 100 };
          const inner = new SqlAccountStore(db);
          const ledger = new CreditLedgerAccountStore(inner, { onError: () => undefined });
          const other = new Database(sqlitePath(database.dataDir), { readonly: true });
          // The turn's admissions are in the staging log (a row per turn), on their way to rate_limit_events.
          const events = (conn: Database.Database) =>
            (conn.prepare("SELECT body FROM staging_log WHERE stream = 'admissions'").pluck().all() as string[])
              .flatMap((body) => JSON.parse(body) as Array<[string, number]>)
              .filter(([id]) => id === a.id).length;
          const seen: Array<[boolean, number, number]> = [];
          const write = inner.writeCreditDeltas.bind(inner);
          let failures = 1;
          inner.writeCreditDeltas = (deltas) => {
            // The limiter's part of the turn is written already, in this transaction: not yet visible to others.
            if (db.dialect === 'sqlite') seen.push([db.sqlite.inTransaction, events(db.sqlite), events(other)]);
            if (failures-- > 0) throw new Error('disk I/O error');
            write(deltas);
          };
          try {
            const [admitted, refused] = await Promise.allSettled([
              limits.admit(a.id, rules, NOW),
              ledger.chargeCredits(a.id, 5),
            ]);
            assert.equal(admitted.status === 'fulfilled' && admitted.value.admitted, true);
            assert.equal(refused.status, 'rejected', 'the charge could not be stored');
            assert.deepEqual(seen, [[true, 1, 0]]);
            assert.equal(events(other), 0, "the admission was rolled back with the turn's charge");
            await Promise.all([limits.admit(a.id, rules, NOW + 1), ledger.chargeCredits(a.id, 5)]);
            assert.deepEqual(seen[1], [true, 2, 0], 'the next turn writes both admissions, then the charge');
            assert.equal(events(other), 2);
            assert.equal(storedCredits(a.id), 95);
          } finally {
            other.close();
            await ledger.close();
          }
        });

        it('deletes the times the minute has left, a chunk of accounts at a time in the background lane', async () => {
          const ids = await Promise.all(Array.from({ length: 150 }, async () => (await newAccount()).id));
          const persistence = new SqliteWindowsPersistence(db.dialect === 'sqlite' ? db.sqlite : assert.fail());
          const chunks: number[] = [];
          const prune = persistence.prune.bind(persistence);
          persistence.prune = (cutoffs) => {
            chunks.push(cutoffs.size);
            prune(cutoffs);
          };
          const store = new InProcessRateLimitStore(persistence, { pruneIntervalMs: 1 });
          const wide = { rpm: 100, rpd: 100, monthly: 100 };
          try {
            await Promise.all(ids.map((id) => store.admit(id, wide, NOW)));
            store.flush();
            await Promise.all(ids.map((id) => store.admit(id, wide, NOW + 61_000)));
            store.flush();
            for (let i = 0; i < 50 && chunks.reduce((a, b) => a + b, 0) < ids.length; i++)
              await new Promise((resolve) => setTimeout(resolve, 5));
            assert.deepEqual(chunks, [64, 64, 22], 'three writes, each in a slice of the lane');
            const left = await db.query<{ n: number }>(
              `SELECT count(*) AS n FROM rate_limit_events WHERE account_id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')})`,
              ids,
            );
            assert.equal(Number(left[0]?.n), ids.length, 'one stored time per account: the one inside the minute');
          } finally {
            await store.close();
          }
        });

        it('stores an admission before it resolves', async () => {
          const id = (await newAccount()).id;
          const rules = { rpm: 10, rpd: 15, monthly: 20 };
          assert.ok((await limits.admit(id, rules, NOW)).admitted);
          assert.ok((await limits.admit(id, rules, NOW + 1)).admitted);
          const other = createRateLimitStore(db);
          const seen = await other.peek(id, rules, NOW + 2);
          assert.deepEqual([seen.minuteCount, seen.dayCount, seen.monthCount], [2, 2, 2], 'read back from disk');
        });
      });
    }

    describe('BufferedUsageStore', () => {
      it('writes rows in batches and shows every recorded row to readers', async () => {
        const accountId = (await newAccount()).id;
        const buffered = new BufferedUsageStore(usage, { flushIntervalMs: 10_000, maxBatch: 1000 });
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
        const direct = await usage.totals(accountId, NOW - 1, NOW + 1);
        assert.equal(direct.requests, 0, 'nothing written before the flush');
        assert.equal((await buffered.totals(accountId, NOW - 1, NOW + 1)).requests, 120, 'reads flush first');
        assert.equal((await usage.totals(accountId, NOW - 1, NOW + 1)).requests, 120);
      });
    });

    describe('UsageStore', () => {
      it('records rows and sums them per period, day and model', async () => {
        const accountId = (await newAccount()).id;
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
        await usage.record(row);
        await usage.record({ ...row, requestId: 'req_2', model: 'PV-CODEX', credits: 3, createdAt: NOW + 86_400_000 });
        await usage.record({
          ...row,
          requestId: 'req_3',
          status: 400,
          credits: 0,
          promptTokens: 0,
          completionTokens: 0,
        });
        const totals = await usage.totals(accountId, NOW - 1, NOW + 2 * 86_400_000);
        assert.deepEqual(totals, { requests: 3, credits: 4, promptTokens: 20, completionTokens: 10 });
        const byDay = await usage.series(accountId, NOW - 1, NOW + 2 * 86_400_000, 'day');
        assert.deepEqual(
          byDay.map((s) => [s.key, s.requests, s.credits]),
          [
            ['2026-11-21', 2, 1],
            ['2026-11-22', 1, 3],
          ],
        );
        const byModel = await usage.series(accountId, NOW - 1, NOW + 2 * 86_400_000, 'model');
        assert.deepEqual(
          byModel.map((s) => [s.key, s.requests]),
          [
            ['PV-CODEX', 1],
            ['PV-TURBO', 2],
          ],
        );
        await usage.recordMany([
          { ...row, requestId: 'req_4', createdAt: NOW + 1 },
          { ...row, requestId: 'req_5', createdAt: NOW + 2 },
        ]);
        assert.equal((await usage.totals(accountId, NOW - 1, NOW + 2 * 86_400_000)).requests, 5);
        const listed = await db.query<{ request_id: string; latency_ms: number }>(
          'SELECT request_id, latency_ms FROM usage_records WHERE account_id = $1 ORDER BY created_at DESC, id DESC',
          [accountId],
        );
        assert.equal(listed.length, 5);
        assert.equal(listed[0]?.request_id, 'req_2');
        assert.equal(Number(listed.find((r) => r.request_id === 'req_1')?.latency_ms), 12);
      });
    });
  });
}
