import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends, createTestDatabase, type TestDatabase } from '../support/databases.js';
import { pvai, type ServerProcess, startServerProcess } from '../support/processes.js';
import { TEST_MODEL } from '../support/server.js';

/** Exactness across replicas: two server processes on one PostgreSQL share every limit. */
describe('two server processes on one PostgreSQL', { skip: !backends().includes('postgres') }, () => {
  let database: TestDatabase;
  let servers: ServerProcess[] = [];
  let env: Record<string, string>;

  before(async () => {
    database = await createTestDatabase('postgres');
    env = { DATABASE_URL: database.databaseUrl ?? '', PVAI_DATA_DIR: database.dataDir, PVAI_LOCAL_MODEL: TEST_MODEL };
    // Migrate once before the replicas start, as a deployment would.
    await pvai(['doctor'], env);
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
