import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { DashboardClient } from '../support/dashboard.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { cliCommand, cliEnv, freePort, pvai, ROOT } from '../support/processes.js';

/** The dashboard's passwords from the CLI, and `pvai serve` telling where the dashboard is. */
describe('pvai and the developer dashboard', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let accountId: string;

  before(async () => {
    database = await createTestDatabase('sqlite');
    env = { PVAI_DATA_DIR: database.dataDir, DATABASE_URL: '' };
    const { stdout } = await pvai(
      [
        'accounts',
        'create',
        '--email',
        'Owner@Example.com',
        '--tier',
        'startup',
        '--password',
        'first-password',
        '--json',
      ],
      env,
    );
    accountId = (JSON.parse(stdout) as { account: { id: string } }).account.id;
  });
  after(() => database.drop());

  it('sets a new password with `pvai accounts set-password`; serve prints the dashboard URL; sign-in works', async () => {
    const set = await pvai(['accounts', 'set-password', '--account', accountId, '--password', 'second-password'], env);
    assert.match(set.stdout, /password set/);
    const port = await freePort();
    const child = spawn(process.execPath, [...cliCommand(), 'serve'], {
      cwd: ROOT,
      env: cliEnv({ PVAI_LOG_LEVEL: 'warn', PVAI_HOST: '127.0.0.1', PVAI_PORT: String(port), ...env }),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const lines = createInterface({ input: child.stdout });
      let printed = '';
      for await (const line of lines) {
        if (line.includes('/dashboard')) {
          printed = line;
          break;
        }
      }
      const url = `http://127.0.0.1:${port}`;
      assert.match(printed, new RegExp(`developer dashboard at ${url}/dashboard`));
      const client = new DashboardClient(url);
      assert.equal((await client.signIn('owner@example.com', 'first-password')).status, 401, 'the old password');
      assert.equal((await client.signIn('owner@example.com', 'second-password')).status, 303);
      assert.equal((await client.get('/dashboard/keys')).status, 200);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
