import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/errors/index.js';
import { SqlIdempotencyStore } from '../../src/idempotency/sql-idempotency-store.js';
import type { ChargeNote } from '../../src/kernel/index.js';
import { postgresOnly } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The fence of a keyed charge on PostgreSQL, where replicas take abandoned claims over: the charge writes its note
 * on the claim only while the claim is still its attempt's, in the charge's own transaction. An attempt that
 * stalled past its lease, whose claim another replica took over, is refused its charge (409), and nothing of it
 * stays: neither the credits nor the note.
 */
describe('a keyed charge is fenced by its claim (PostgreSQL)', { skip: postgresOnly() }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer('postgres');
  });
  after(async () => {
    await server.close();
  });

  it("charges while the claim is the attempt's, and refuses and rolls back once another took it over", async () => {
    const { accountId } = await server.createAccount('startup', 100);
    const { db, accountStore } = server.running.runtime;
    const store = new SqlIdempotencyStore(db);
    const now = Date.now();
    const claim = { scope: accountId, key: 'fenced-1', fingerprint: 'f', endpoint: 'createChatCompletion' };
    assert.ok(
      await store.insert({
        ...claim,
        owner: 'att_mine',
        leaseUntil: now + 30_000,
        createdAt: now,
        expiresAt: now + 86_400_000,
      }),
    );
    const noteBy = (owner: string): ChargeNote => ({
      sql: store.noteSql,
      params: (refund) => store.noteParams(accountId, claim.key, owner, [refund]),
      lost: () => new AppError('IDEMPOTENCY_KEY_IN_USE', 'taken over'),
    });
    const balance = async () =>
      Number(
        (await db.query<{ credits: number }>('SELECT credits FROM accounts WHERE id = $1', [accountId]))[0]?.credits,
      );
    const noted = async () =>
      String(
        (
          await db.query<{ refunds: string }>('SELECT refunds FROM idempotency_keys WHERE idem_key = $1', [claim.key])
        )[0]?.refunds,
      );

    const mine = await accountStore.chargeCredits(accountId, 10, undefined, noteBy('att_mine'));
    assert.equal(mine.ok, true);
    assert.equal(await balance(), 90);
    assert.match(await noted(), /"amount":10/);

    // Another replica takes the claim over (its lease ran out while this attempt stalled).
    await db.query('UPDATE idempotency_keys SET owner = $1 WHERE idem_key = $2', ['att_theirs', claim.key]);
    await assert.rejects(
      accountStore.chargeCredits(accountId, 10, undefined, noteBy('att_mine')),
      (err: unknown) => err instanceof AppError && err.code === 'IDEMPOTENCY_KEY_IN_USE',
    );
    assert.equal(await balance(), 90, 'the refused charge was rolled back');
    assert.match(await noted(), /"amount":10/, 'the note is the one written before');
  });
});
