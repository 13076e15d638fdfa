import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { createPostgresCache, type SqlQuery } from '../../src/cache/index.js';
import { RESPONSE_CACHE_POSTGRES_DDL } from '../../src/storage/index.js';
import { eventually } from '../support/eventually.js';
import { completionEntry, createManualClock, runResponseCacheContract, uniqueKey } from './response-cache.contract.js';

const databaseUrl = process.env.DATABASE_URL;
const inCi = process.env.CI === 'true';

if (databaseUrl === undefined || databaseUrl === '') {
  if (inCi) {
    // CI must exercise the shared cache; a silent skip would hide a broken setup.
    test('postgres response cache', () => {
      assert.fail('DATABASE_URL must be set in CI to run the PostgreSQL response cache tests');
    });
  } else {
    test('postgres response cache', {
      skip: 'DATABASE_URL is not set; e.g. DATABASE_URL=postgres://pvai:pvai@127.0.0.1:5432/pvai to run these',
    }, () => {});
  }
} else {
  registerPostgresTests(databaseUrl);
}

function registerPostgresTests(connectionString: string): void {
  // A throwaway schema per run keeps parallel runs and leftovers apart; the
  // dedicated pool resolves the unqualified table name through search_path.
  const schema = `pvai_cache_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Pool({ connectionString, max: 1 });
  const pool = new pg.Pool({ connectionString, options: `-c search_path=${schema}` });
  const query: SqlQuery = (sql, params) => pool.query(sql, params);

  before(async () => {
    await admin.query(`CREATE SCHEMA ${schema}`);
    await pool.query(RESPONSE_CACHE_POSTGRES_DDL);
  });

  after(async () => {
    await pool.end();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  });

  runResponseCacheContract('postgres', (clock) => createPostgresCache(query, { now: clock.now }));

  describe('postgres response cache storage', () => {
    test('the DDL is idempotent', async () => {
      await pool.query(RESPONSE_CACHE_POSTGRES_DDL);
    });

    test('the table is UNLOGGED', async () => {
      const { rows } = await pool.query<{ relpersistence: string }>(
        `SELECT c.relpersistence FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relname = 'response_cache'`,
        [schema],
      );
      assert.deepEqual(rows, [{ relpersistence: 'u' }]);
    });

    test('sweepExpired deletes expired rows and keeps live ones', async () => {
      const clock = createManualClock();
      const cache = createPostgresCache(query, { now: clock.now });
      const shortKeys = [uniqueKey(), uniqueKey(), uniqueKey()];
      const longKey = uniqueKey();
      for (const key of shortKeys) await cache.set(key, completionEntry('short'), 1_000);
      await cache.set(longKey, completionEntry('long'), 60_000);

      clock.advance(1_000);
      const swept = await cache.sweepExpired();

      assert.ok(swept >= shortKeys.length, `swept ${swept} rows`);
      assert.deepEqual(await storedKeys([...shortKeys, longKey]), [longKey]);
      assert.deepEqual(await cache.get(longKey), completionEntry('long'));
      await cache.close();
    });

    test('the background sweep runs on its interval', async () => {
      const clock = createManualClock();
      const cache = createPostgresCache(query, { now: clock.now, sweepIntervalMs: 20 });
      const key = uniqueKey();
      await cache.set(key, completionEntry('short'), 1_000);
      clock.advance(5_000);
      try {
        await waitUntil(async () => (await storedKeys([key])).length === 0);
      } finally {
        await cache.close();
      }
    });

    test('a failing background sweep is reported, not thrown', async () => {
      const errors: unknown[] = [];
      const failing: SqlQuery = async () => {
        throw new Error('database unavailable');
      };
      const cache = createPostgresCache(failing, { sweepIntervalMs: 10, onSweepError: (e) => errors.push(e) });
      try {
        await waitUntil(async () => errors.length > 0);
      } finally {
        await cache.close();
      }
      assert.match(String(errors[0]), /database unavailable/);
    });
  });

  async function storedKeys(keys: string[]): Promise<string[]> {
    const { rows } = await pool.query<{ key: string }>(
      'SELECT key FROM response_cache WHERE key = ANY($1) ORDER BY key',
      [keys],
    );
    return rows.map((row) => row.key);
  }
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 2_000): Promise<void> {
  if (!(await eventually(condition, Boolean, timeoutMs))) assert.fail(`condition not met within ${timeoutMs} ms`);
}
