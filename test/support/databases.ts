import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export type Backend = 'sqlite' | 'postgres';

/** A fresh, empty database for one test server or store suite; `drop` removes it. */
export interface TestDatabase {
  backend: Backend;
  dataDir: string;
  databaseUrl?: string;
  drop(): Promise<void>;
}

/**
 * The backends to run against: SQLite always, PostgreSQL when DATABASE_URL is set. In CI
 * (CI=true) PostgreSQL is required: a missing DATABASE_URL fails instead of silently skipping.
 */
export function backends(): Backend[] {
  if (process.env.DATABASE_URL) return ['sqlite', 'postgres'];
  if (process.env.CI === 'true')
    throw new Error('CI=true but DATABASE_URL is unset: the PostgreSQL suites must run in CI');
  return ['sqlite'];
}

/**
 * The skip of a suite that only PostgreSQL can run (replicas sharing one database, its planner), with the
 * reason node:test prints; false where it runs. In CI `backends()` fails without DATABASE_URL, so never a skip.
 */
export function postgresOnly(): string | false {
  return backends().includes('postgres')
    ? false
    : 'PostgreSQL only: DATABASE_URL is unset (e.g. DATABASE_URL=postgres://pvai:pvai@127.0.0.1:5432/pvai)';
}

/** `adminUrl`: the PostgreSQL server to create the database on (default DATABASE_URL). */
export async function createTestDatabase(
  backend: Backend,
  adminUrl: string | undefined = process.env.DATABASE_URL,
): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pvai-test-'));
  if (backend === 'sqlite') {
    return { backend, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  if (!adminUrl) throw new Error('DATABASE_URL is required for the PostgreSQL backend');
  const name = `pvai_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    backend,
    dataDir,
    databaseUrl: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
