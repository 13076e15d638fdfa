import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRateLimitStore } from '../../src/limits/index.js';
import { NOW, storageContracts } from './store-contracts.js';

storageContracts((s) => {
  describe('RateLimitStore', () => {
    const rules = { rpm: 10, rpd: 15, monthly: 20 };

    it('admits exactly the remaining requests under 50 concurrent admissions', async () => {
      const id = (await s.newAccount()).id;
      const results = await Promise.all(Array.from({ length: 50 }, () => s.limits.admit(id, rules, NOW)));
      assert.equal(results.filter((r) => r.admitted).length, 10);
    });

    it('slides the minute window and keeps day and month counts', async () => {
      const id = (await s.newAccount()).id;
      for (let i = 0; i < 10; i++) assert.ok((await s.limits.admit(id, rules, NOW + i * 1000)).admitted);
      const full = await s.limits.admit(id, rules, NOW + 10_000);
      assert.equal(full.admitted, false);
      assert.equal(full.minuteCount, 10);
      assert.equal(full.minuteOldest, NOW);
      const later = await s.limits.admit(id, rules, NOW + 60_001);
      assert.equal(later.admitted, true);
      assert.equal(later.minuteCount, 9);
      assert.equal(later.dayCount, 10);
      assert.equal(later.monthCount, 10);
    });

    it('does not count when consume is false', async () => {
      const id = (await s.newAccount()).id;
      await s.limits.admit(id, rules, NOW);
      const peek = await s.limits.peek(id, rules, NOW + 1);
      const again = await s.limits.peek(id, rules, NOW + 2);
      assert.equal(peek.minuteCount, 1);
      assert.equal(again.minuteCount, 1);
      assert.equal(again.dayCount, 1);
    });

    it('starts a new day and month at UTC boundaries', async () => {
      const id = (await s.newAccount()).id;
      const lateNov30 = Date.UTC(2026, 10, 30, 23, 59, 30);
      await s.limits.admit(id, rules, lateNov30);
      const dec1 = await s.limits.admit(id, rules, Date.UTC(2026, 11, 1, 0, 0, 31));
      assert.equal(dec1.dayCount, 0);
      assert.equal(dec1.monthCount, 0);
    });

    it('keeps every window across a restart of the store', async () => {
      const id = (await s.newAccount()).id;
      for (let i = 0; i < 3; i++) await s.limits.admit(id, rules, NOW + i * 1000);
      await s.limits.close();
      s.limits = createRateLimitStore(s.db);
      const after = await s.limits.peek(id, rules, NOW + 3000);
      assert.deepEqual(
        { minute: after.minuteCount, oldest: after.minuteOldest, day: after.dayCount, month: after.monthCount },
        { minute: 3, oldest: NOW, day: 3, month: 3 },
      );
      // The sliding minute still slides after the restart: the first admission leaves it at NOW + 60 s.
      const slid = await s.limits.admit(id, rules, NOW + 60_500);
      assert.equal(slid.minuteCount, 2);
      assert.equal(slid.dayCount, 3);
      await s.limits.close();
      s.limits = createRateLimitStore(s.db);
      const again = await s.limits.peek(id, rules, NOW + 60_600);
      assert.equal(again.minuteCount, 3, 'two survivors plus the admission made before the second restart');
      assert.equal(again.dayCount, 4);
    });

    it('stores every admission of a turn, and deletes the times the minute has left by close', async () => {
      const [a, b] = [(await s.newAccount()).id, (await s.newAccount()).id];
      const stored = async (id: string) =>
        (
          await s.db.query<{ at_ms: number | string }>(
            `SELECT at_ms FROM rate_limit_events WHERE account_id = $1 ORDER BY at_ms`,
            [id],
          )
        ).map((r) => Number(r.at_ms));
      // 23 admissions in one turn over two accounts: more rows than one statement size takes.
      const wide = { rpm: 100, rpd: 100, monthly: 100 };
      await Promise.all(Array.from({ length: 23 }, (_, i) => s.limits.admit(i % 2 ? b : a, wide, NOW + i)));
      await s.limits.admit(a, wide, NOW + 61_000);
      await s.limits.close();
      assert.equal((await stored(b)).length, 11, 'every admission of the turn, each its own time');
      assert.deepEqual(await stored(a), [NOW + 61_000], 'the times before the minute are gone once closed');
      s.limits = createRateLimitStore(s.db);
      const after = await s.limits.peek(a, wide, NOW + 61_001);
      assert.deepEqual([after.minuteCount, after.dayCount], [1, 13]);
    });

    it('counts a clock that moved back and keeps it across a restart', async () => {
      const id = (await s.newAccount()).id;
      await s.limits.admit(id, rules, NOW + 5000);
      await s.limits.admit(id, rules, NOW + 1000);
      await s.limits.close();
      s.limits = createRateLimitStore(s.db);
      const after = await s.limits.peek(id, rules, NOW + 6000);
      assert.equal(after.minuteCount, 2);
      assert.equal(after.minuteOldest, NOW + 1000);
    });
  });
});
