import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pg from 'pg';
import { MIGRATIONS, openDb } from '../../src/storage/data-source.js';
import { createTestDatabase, postgresOnly } from '../support/databases.js';
import { type ServerProcess, startServerProcess } from '../support/processes.js';

/** Tables with their columns and types, indexes and functions: what "the schema" is for this comparison. */
async function schemaOf(databaseUrl: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const columns = await client.query(
      `SELECT table_name || '.' || column_name || ' ' || data_type AS item FROM information_schema.columns
       WHERE table_schema = 'public'`,
    );
    const indexes = await client.query(
      `SELECT 'index ' || indexdef AS item FROM pg_indexes WHERE schemaname = 'public'`,
    );
    const functions = await client.query(
      `SELECT 'function ' || p.proname AS item FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'public'`,
    );
    return [...columns.rows, ...indexes.rows, ...functions.rows].map((r: { item: string }) => r.item).sort();
  } finally {
    await client.end();
  }
}

/**
 * The first deployment of several replicas: every one of them finds the database empty and migrates it.
 * Without the migration lock two of them ran the same migration and one died on
 * `relation "dashboard_sessions" already exists` (a hostile probe: 6 of 7 tries with two replicas).
 */
describe('three replicas starting at once on an empty PostgreSQL database', {
  skip: postgresOnly(),
}, () => {
  it('all come up, with the whole schema and each migration recorded once', { timeout: 180_000 }, async () => {
    const raced = await createTestDatabase('postgres');
    const alone = await createTestDatabase('postgres');
    const started: ServerProcess[] = [];
    try {
      const env = { DATABASE_URL: raced.databaseUrl ?? '', PVAI_DATA_DIR: raced.dataDir, PVAI_LOCAL_MODEL: '' };
      const outcomes = await Promise.allSettled([1, 2, 3].map(() => startServerProcess(env)));
      for (const outcome of outcomes) if (outcome.status === 'fulfilled') started.push(outcome.value);
      const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [(o.reason as Error).message] : []));
      assert.deepEqual(failures, [], 'every replica started');
      for (const server of started) {
        // Readiness as a whole also wants a model and a sandbox this test does not give; the database it checks.
        const ready = (await (await fetch(`${server.url}/z1/health/ready`)).json()) as {
          checks: { database: { ok: boolean } };
        };
        assert.equal(ready.checks.database.ok, true, `${server.url} reaches its database`);
      }

      const client = new pg.Client({ connectionString: raced.databaseUrl });
      await client.connect();
      const recorded = await client.query<{ name: string; n: number }>(
        'SELECT name, count(*)::int AS n FROM pvai_migrations GROUP BY name ORDER BY name',
      );
      await client.end();
      const expected = MIGRATIONS.map((m) => new m().name ?? m.name).sort();
      assert.deepEqual(
        recorded.rows.map((r) => [r.name, r.n]),
        expected.map((name) => [name, 1]),
        'each migration recorded exactly once',
      );

      // The same schema as one process migrating alone.
      const reference = await openDb({ databaseUrl: alone.databaseUrl, dataDir: alone.dataDir });
      await reference.close();
      assert.deepEqual(await schemaOf(raced.databaseUrl ?? ''), await schemaOf(alone.databaseUrl ?? ''));
    } finally {
      await Promise.all(started.map((s) => s.stop()));
      await raced.drop();
      await alone.drop();
    }
  });
});
