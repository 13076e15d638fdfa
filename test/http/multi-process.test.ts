import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, postgresOnly, type TestDatabase } from '../support/databases.js';
import { pvai, pvaiStatus, type ServerProcess, startServerProcess } from '../support/processes.js';
import { TEST_MODEL } from '../support/server.js';

/** Exactness across replicas: two server processes on one PostgreSQL share every limit. */
describe('two server processes on one PostgreSQL', { skip: postgresOnly() }, () => {
  let database: TestDatabase;
  let servers: ServerProcess[] = [];
  let env: Record<string, string>;

  before(async () => {
    database = await createTestDatabase('postgres');
    env = { DATABASE_URL: database.databaseUrl ?? '', PVAI_DATA_DIR: database.dataDir, PVAI_LOCAL_MODEL: TEST_MODEL };
    // Migrate once before the replicas start, as a deployment would (whatever else doctor finds missing).
    await pvaiStatus(['doctor'], env);
    servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await database.drop();
  });

  it('admits exactly 10 of 50 concurrent requests spread over both', async () => {
    const { stdout } = await pvai(['accounts', 'create', '--email', 'mp@example.com', '--tier', 'free', '--json'], env);
    const apiKey = (JSON.parse(stdout) as { api_key: string }).api_key;
    const statuses = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const server = servers[i % 2];
        assert.ok(server);
        const res = await fetch(`${server.url}/z1/models`, { headers: { Authorization: `Bearer ${apiKey}` } });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    assert.equal(statuses.filter((s) => s === 200).length, 10);
    assert.equal(statuses.filter((s) => s === 429).length, 40);
  });
});

/** Embedded SQLite has one owner: the limiter decides in memory, so a second server must not share the file. */
describe('two server processes on one embedded SQLite database', () => {
  let database: TestDatabase;
  let first: ServerProcess | undefined;

  before(async () => {
    database = await createTestDatabase('sqlite');
  });
  after(async () => {
    await first?.stop();
    await database.drop();
  });

  it('refuses to start the second one and names the way to run replicas', { timeout: 60_000 }, async () => {
    // A data directory that does not exist yet, as on a fresh machine. DATABASE_URL emptied: the suite
    // may run with one set for the PostgreSQL backends.
    const dataDir = join(database.dataDir, 'not-yet-created');
    const env = { PVAI_DATA_DIR: dataDir, PVAI_LOCAL_MODEL: TEST_MODEL, DATABASE_URL: '' };
    first = await startServerProcess(env);
    const second = await pvai(['serve'], {
      ...env,
      PVAI_HOST: '127.0.0.1',
      PVAI_PORT: '0',
      PVAI_LOG_LEVEL: 'warn',
    }).then(
      () => assert.fail('the second server started'),
      (err: { code?: number; stderr?: string }) => err,
    );
    assert.notEqual(second.code, 0);
    assert.match(second.stderr ?? '', /another pvai server is already using .*pvai\.sqlite.*DATABASE_URL/s);
    const res = await fetch(`${first.url}/z1/health`);
    assert.equal(res.status, 200, 'the first server keeps serving');
  });
});
