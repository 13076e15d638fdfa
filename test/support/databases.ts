import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDb } from '../../src/storage/index.js';

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

const MIGRATIONS_DIR = join(import.meta.dirname, '..', '..', 'src', 'storage', 'migrations');
/** The advisory lock the template is built under (any bigint no other lock of pvai or its tests uses). */
const TEMPLATE_LOCK_KEY = 7_364_821_905_114;
let template: Promise<string> | undefined;

/**
 * A PostgreSQL database with every migration applied, that test databases are copied from (`CREATE DATABASE …
 * TEMPLATE`, a file copy, where migrating a fresh database is a second of DDL for every server a test starts).
 * Named by a hash of the migrations, so a change to them builds a new one; built once for all the test processes,
 * under an advisory lock, as `…_building` renamed when done, so no process copies one half-built.
 */
function migratedTemplate(adminUrl: string): Promise<string> {
  template ??= (async () => {
    const hash = createHash('sha256');
    for (const file of readdirSync(MIGRATIONS_DIR).sort())
      hash.update(file).update(readFileSync(join(MIGRATIONS_DIR, file)));
    const name = `pvai_template_${hash.digest('hex').slice(0, 16)}`;
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    try {
      await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
      if (found.rowCount === 0) {
        const building = `${name}_building`;
        await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
        await admin.query(`CREATE DATABASE ${building}`);
        const url = new URL(adminUrl);
        url.pathname = `/${building}`;
        const dataDir = mkdtempSync(join(tmpdir(), 'pvai-template-'));
        const db = await openDb({ dataDir, databaseUrl: url.toString(), poolSize: 1 });
        await db.close();
        rmSync(dataDir, { recursive: true, force: true });
        await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      }
      return name;
    } finally {
      await admin.end();
    }
  })();
  return template;
}

/**
 * A fresh database as a server would leave it after its first start: on PostgreSQL a copy of the migrated
 * template (see migratedTemplate), on SQLite an empty directory (migrating a file is quick). `createTestDatabase`
 * is the empty one, for the tests of migrations themselves.
 */
export async function createMigratedTestDatabase(
  backend: Backend,
  adminUrl: string | undefined = process.env.DATABASE_URL,
): Promise<TestDatabase> {
  if (backend === 'sqlite' || !adminUrl) return createTestDatabase(backend, adminUrl);
  return createTestDatabase(backend, adminUrl, await migratedTemplate(adminUrl));
}

/** `adminUrl`: the PostgreSQL server to create the database on (default DATABASE_URL). */
export async function createTestDatabase(
  backend: Backend,
  adminUrl: string | undefined = process.env.DATABASE_URL,
  fromTemplate?: string,
): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pvai-test-'));
  if (backend === 'sqlite') {
    return { backend, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  if (!adminUrl) throw new Error('DATABASE_URL is required for the PostgreSQL backend');
  const name = `pvai_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}${fromTemplate ? ` TEMPLATE ${fromTemplate}` : ''}`);
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
