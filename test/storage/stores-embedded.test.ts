import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { CreditLedgerAccountStore, SqlAccountStore } from '../../src/accounts/index.js';
import { InProcessRateLimitStore } from '../../src/limits/adapters/in-process-rate-limit-store.js';
import { SqliteWindowsPersistence } from '../../src/limits/adapters/sqlite-windows-persistence.js';
import { createRateLimitStore } from '../../src/limits/index.js';
import { SqlMemoryStore } from '../../src/memory/index.js';
import { openDb, sqlitePath } from '../../src/storage/data-source.js';
import { EXTERNAL_CHANGE_POLL_MS } from '../../src/storage/index.js';
import { NOW, storageContracts } from './store-contracts.js';

/** What the owner of an embedded (SQLite) database does that no other backend has: a ledger, staging, a lock. */
storageContracts((s) => {
  describe('embedded ownership', () => {
    it('refuses a second owner of the database while the first holds it', async () => {
      await assert.rejects(
        openDb({ dataDir: s.database.dataDir, owner: true }),
        /another pvai server is already using .*pvai\.sqlite/,
      );
    });

    const storedCredits = (id: string) => {
      const other = new Database(sqlitePath(s.database.dataDir), { readonly: true });
      try {
        return (other.prepare('SELECT credits FROM accounts WHERE id = ?').pluck().get(id) as number) ?? -1;
      } finally {
        other.close();
      }
    };

    it('stores a charge before it resolves, and uses credits another connection (the CLI) added once noticed', async () => {
      const a = await s.newAccount(3);
      assert.ok(s.accounts instanceof CreditLedgerAccountStore, 'the owner of an embedded database keeps a ledger');
      const cli = new Database(sqlitePath(s.database.dataDir));
      try {
        assert.equal((await s.accounts.chargeCredits(a.id, 2)).ok, true);
        assert.equal(storedCredits(a.id), 1, 'on disk once the charge resolved');
        assert.equal((await s.accounts.getAccount(a.id))?.credits, 1);
        assert.equal((await s.accounts.chargeCredits(a.id, 2)).ok, false, 'never below zero');
        cli.prepare('UPDATE accounts SET credits = credits + 10 WHERE id = ?').run(a.id);
        await new Promise((resolve) => setTimeout(resolve, 3 * EXTERNAL_CHANGE_POLL_MS));
        const charge = await s.accounts.chargeCredits(a.id, 2);
        assert.deepEqual(charge, { ok: true, balance: 9 }, "the CLI's credits count once noticed");
        assert.equal(storedCredits(a.id), 9);
        await s.accounts.refundCredits(a.id, 2);
        assert.equal(storedCredits(a.id), 11, 'a refund too is on disk once it resolved');
      } finally {
        cli.close();
      }
    });

    it("knows its users' memory versions, and rereads them once another connection (the CLI) committed", async () => {
      const memories = new SqlMemoryStore(s.db);
      const tenant = { accountId: (await s.newAccount()).id, userId: 'ada' };
      assert.equal(await memories.version(tenant), '0', 'no memories: version 0');
      await memories.bumpVersion(tenant);
      const own = await memories.version(tenant);
      assert.notEqual(own, '0', 'its own write is known at once');
      const cli = new Database(sqlitePath(s.database.dataDir));
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
      const a = await s.newAccount(100);
      const inner = new SqlAccountStore(s.db);
      const writes: number[] = [];
      const write = inner.writeCreditDeltas.bind(inner);
      inner.writeCreditDeltas = (deltas) => {
        writes.push(deltas.length);
        write(deltas);
      };
      const ledger = new CreditLedgerAccountStore(inner);
      try {
        const b = await s.newAccount(100);
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
      const a = await s.newAccount(10);
      const inner = new SqlAccountStore(s.db);
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
      const a = await s.newAccount(100);
      const rules = { rpm: 100, rpd: 100, monthly: 100 };
      const inner = new SqlAccountStore(s.db);
      const ledger = new CreditLedgerAccountStore(inner, { onError: () => undefined });
      const other = new Database(sqlitePath(s.database.dataDir), { readonly: true });
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
        if (s.db.dialect === 'sqlite') seen.push([s.db.sqlite.inTransaction, events(s.db.sqlite), events(other)]);
        if (failures-- > 0) throw new Error('disk I/O error');
        write(deltas);
      };
      try {
        const [admitted, refused] = await Promise.allSettled([
          s.limits.admit(a.id, rules, NOW),
          ledger.chargeCredits(a.id, 5),
        ]);
        assert.equal(admitted.status === 'fulfilled' && admitted.value.admitted, true);
        assert.equal(refused.status, 'rejected', 'the charge could not be stored');
        assert.deepEqual(seen, [[true, 1, 0]]);
        assert.equal(events(other), 0, "the admission was rolled back with the turn's charge");
        await Promise.all([s.limits.admit(a.id, rules, NOW + 1), ledger.chargeCredits(a.id, 5)]);
        assert.deepEqual(seen[1], [true, 2, 0], 'the next turn writes both admissions, then the charge');
        assert.equal(events(other), 2);
        assert.equal(storedCredits(a.id), 95);
      } finally {
        other.close();
        await ledger.close();
      }
    });

    it('deletes the times the minute has left, a chunk of accounts at a time in the background lane', async () => {
      const ids = await Promise.all(Array.from({ length: 150 }, async () => (await s.newAccount()).id));
      const persistence = new SqliteWindowsPersistence(s.db.dialect === 'sqlite' ? s.db.sqlite : assert.fail());
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
        const left = await s.db.query<{ n: number }>(
          `SELECT count(*) AS n FROM rate_limit_events WHERE account_id IN (${ids.map((_, i) => `$${i + 1}`).join(', ')})`,
          ids,
        );
        assert.equal(Number(left[0]?.n), ids.length, 'one stored time per account: the one inside the minute');
      } finally {
        await store.close();
      }
    });

    it('stores an admission before it resolves', async () => {
      const id = (await s.newAccount()).id;
      const rules = { rpm: 10, rpd: 15, monthly: 20 };
      assert.ok((await s.limits.admit(id, rules, NOW)).admitted);
      assert.ok((await s.limits.admit(id, rules, NOW + 1)).admitted);
      const other = createRateLimitStore(s.db);
      const seen = await other.peek(id, rules, NOW + 2);
      assert.deepEqual([seen.minuteCount, seen.dayCount, seen.monthCount], [2, 2, 2], 'read back from disk');
    });
  });
}, 'sqlite');
