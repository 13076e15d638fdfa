import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admits, fullWindows } from '../../src/limits/admission-rule.js';
import { createRateLimitStore, type RateLimitStore } from '../../src/limits/index.js';
import type { AdmissionCounts } from '../../src/limits/types.js';
import { utcDayStart, utcMonthStart } from '../../src/limits/windows.js';
import { openDb } from '../../src/storage/data-source.js';
import type { Db } from '../../src/storage/db.js';
import { createTestDatabase, postgresOnly, type TestDatabase } from '../support/databases.js';
import { countsOf, DECISIONS, SEQUENCES, type Sequence, stateAfter } from './admission-cases.js';

/**
 * The rate-limit admission rule has two homes that cannot be one: `admission-rule.ts` (the embedded store and
 * the rate limiter) and PostgreSQL's `pvai_admit` (an applied migration, replaced only by a new one). Both run
 * here on the same cases and must agree: one decision at a time from a stored state, then sequences of
 * requests through the two stores as the server builds them.
 */

describe('the admission rule (TypeScript)', () => {
  for (const c of DECISIONS) {
    it(c.name, () => {
      const counts = countsOf(c);
      assert.equal(admits(counts, c.limits), c.admitted);
      assert.deepEqual(fullWindows(counts, c.limits), c.full);
    });
  }
});

let accounts = 0;
/** Runs a sequence on a store, a fresh account for it; the counts each step saw. */
async function run(store: RateLimitStore, s: Sequence): Promise<AdmissionCounts[]> {
  const account = `parity-${process.pid}-${++accounts}`;
  const seen: AdmissionCounts[] = [];
  for (const step of s.steps) {
    const now = s.start + step.at;
    const counts = step.peek ? await store.peek(account, s.limits, now) : await store.admit(account, s.limits, now);
    seen.push(counts);
  }
  return seen;
}

describe('the embedded store on sequences', () => {
  let database: TestDatabase;
  let db: Db;
  let store: RateLimitStore;
  before(async () => {
    database = await createTestDatabase('sqlite');
    db = await openDb({ dataDir: database.dataDir, owner: true });
    store = createRateLimitStore(db);
  });
  after(async () => {
    await store.close();
    await db.close();
    await database.drop();
  });

  for (const s of SEQUENCES) {
    it(s.name, async () => {
      const seen = await run(store, s);
      assert.deepEqual(
        seen.map((c) => c.admitted),
        s.steps.map((step) => step.admitted),
      );
    });
  }
});

describe('PostgreSQL pvai_admit agrees with the rule', { skip: postgresOnly() }, () => {
  let database: TestDatabase;
  let db: Db;
  let embeddedDatabase: TestDatabase;
  let embeddedDb: Db;
  before(async () => {
    database = await createTestDatabase('postgres');
    db = await openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir });
    embeddedDatabase = await createTestDatabase('sqlite');
    embeddedDb = await openDb({ dataDir: embeddedDatabase.dataDir, owner: true });
  });
  after(async () => {
    await db?.close();
    await database?.drop();
    await embeddedDb?.close();
    await embeddedDatabase?.drop();
  });

  for (const c of DECISIONS) {
    it(`decides: ${c.name}`, async () => {
      const account = `decision-${process.pid}-${++accounts}`;
      for (const at of c.times)
        await db.query('INSERT INTO rate_limit_events (account_id, at_ms) VALUES ($1, $2)', [account, at]);
      for (const k of c.counters) {
        await db.query(
          'INSERT INTO rate_limit_counters (account_id, window_name, period_start, count) VALUES ($1, $2, $3, $4)',
          [account, k.window, k.start, k.count],
        );
      }
      const { rpm, rpd, monthly } = c.limits;
      const [row] = await db.query<{
        admitted: boolean;
        minute_count: number;
        minute_oldest: string | null;
        day_count: number;
        month_count: number;
      }>('SELECT * FROM pvai_admit($1, $2, $3, $4, $5, $6, $7, $8)', [
        account,
        c.now,
        rpm,
        rpd,
        monthly,
        utcDayStart(c.now),
        utcMonthStart(c.now),
        c.consume,
      ]);
      assert.ok(row);
      const counts = {
        minuteCount: row.minute_count,
        minuteOldest: row.minute_oldest === null ? null : Number(row.minute_oldest),
        dayCount: row.day_count,
        monthCount: row.month_count,
      };
      assert.deepEqual(counts, countsOf(c), 'the counts the rule was given');
      assert.equal(row.admitted, admits(counts, c.limits), 'the decision');
      assert.equal(row.admitted, c.admitted);

      const times = await db.query<{ at_ms: string }>(
        'SELECT at_ms FROM rate_limit_events WHERE account_id = $1 ORDER BY at_ms',
        [account],
      );
      const counter = async (window: string, start: number) =>
        (
          await db.query<{ count: number }>(
            'SELECT count FROM rate_limit_counters WHERE account_id = $1 AND window_name = $2 AND period_start = $3',
            [account, window, start],
          )
        )[0]?.count ?? 0;
      assert.deepEqual(
        {
          minute: times.map((t) => Number(t.at_ms)),
          day: await counter('day', utcDayStart(c.now)),
          month: await counter('month', utcMonthStart(c.now)),
        },
        stateAfter(c),
        'the state after the request',
      );
    });
  }

  for (const s of SEQUENCES) {
    it(`matches the embedded store: ${s.name}`, async () => {
      const postgres = createRateLimitStore(db);
      const embedded = createRateLimitStore(embeddedDb);
      try {
        const [onPostgres, inProcess] = [await run(postgres, s), await run(embedded, s)];
        assert.deepEqual(onPostgres, inProcess);
        assert.deepEqual(
          onPostgres.map((c) => c.admitted),
          s.steps.map((step) => step.admitted),
        );
      } finally {
        await postgres.close();
        await embedded.close();
      }
    });
  }
});
