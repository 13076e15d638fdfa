/**
 * Adding a capability is its folder and one line in compose.ts. The proof: a copy of the service with a capability
 * planted in `src/planted/` (and its operation in the contract, where every interface change starts), compose.ts
 * given one `plug` line (and its import), and no other file changed. The planted capability then serves its
 * operation, its context source reaches chat, its section is in an end user's export and erase, it records the end of
 * every request, and it is closed at the stop.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { type MockUpstream, startMockUpstream, systemPrompt } from '../support/mock-openai-upstream.js';
import { freePort, ROOT } from '../support/processes.js';
import { createAccount, serverEnv } from '../support/reliability.js';

const PLANTED = `import { writeFileSync } from 'node:fs';

export function plantedCapability(deps: { closedFile: string }) {
  let requests = 0;
  return {
    name: 'planted',
    operations: {
      getPlanted: async () => ({ status: 200, body: { object: 'planted', requests } }),
    },
    context: {
      name: 'planted',
      applies: () => true,
      version: async () => 'planted-1',
      contribute: async () => ({ notes: ['PLANTED-NOTE: the planted capability was asked.'] }),
    },
    userData: {
      name: 'planted',
      async *export(tenant: { userId: string }) {
        yield { note: \`planted for \${tenant.userId}\` };
      },
      erase: async () => 1,
    },
    endOfRequest: () => {
      requests += 1;
    },
    close: () => writeFileSync(deps.closedFile, 'closed'),
  };
}
`;

const OPERATION = `  /z1/planted:
    get:
      operationId: getPlanted
      summary: The planted capability's own operation
      responses:
        '200':
          description: What it has counted.
          content:
            application/json:
              schema: { type: object }
`;

/** The service's files, copied: the planted capability may change nothing outside the copy. */
function plantedCopy(closedFile: string): { dir: string; changedLines: number } {
  const dir = mkdtempSync(join(tmpdir(), 'pvai-planted-'));
  for (const part of ['src', 'openapi', 'generated', 'package.json', 'tsconfig.json']) {
    cpSync(join(ROOT, part), join(dir, part), { recursive: true });
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  mkdirSync(join(dir, 'src', 'planted'));
  writeFileSync(join(dir, 'src', 'planted', 'index.ts'), PLANTED);
  const contract = join(dir, 'openapi', 'openapi.yaml');
  writeFileSync(contract, readFileSync(contract, 'utf8').replace(/^paths:\n/m, `paths:\n${OPERATION}`));
  const composePath = join(dir, 'src', 'compose.ts');
  const compose = readFileSync(composePath, 'utf8');
  const anchor = /^ {2}plug\(codeCapability\(.*\n/m;
  assert.match(compose, anchor, 'compose.ts plugs the code capability on a line of its own');
  const planted = [
    "import { plantedCapability } from './planted/index.js';\n",
    `  plug(plantedCapability({ closedFile: ${JSON.stringify(closedFile)} }));\n`,
  ];
  const changed = planted[0] + compose.replace(anchor, (line) => line + planted[1]);
  writeFileSync(composePath, changed);
  return { dir, changedLines: changed.split('\n').length - compose.split('\n').length };
}

async function serve(dir: string, env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', join(dir, 'src', 'cli', 'pvai.ts'), 'serve'], {
    cwd: dir,
    env: { ...process.env, PVAI_LOG_LEVEL: 'warn', PVAI_HOST: '127.0.0.1', PVAI_PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (
    !(await fetch(`${url}/z1/health`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the planted copy did not start (exit ${child.exitCode})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, child };
}

describe('a capability planted in its own folder, plugged by one line of compose.ts', () => {
  let database: TestDatabase;
  let upstream: MockUpstream;
  let copy: { dir: string; changedLines: number };
  let server: { url: string; child: ChildProcess };
  let apiKey: string;
  const closedFile = join(mkdtempSync(join(tmpdir(), 'pvai-planted-closed-')), 'closed');

  before(async () => {
    database = await createTestDatabase('sqlite');
    upstream = await startMockUpstream();
    copy = plantedCopy(closedFile);
    server = await serve(copy.dir, serverEnv(database, upstream.url));
    ({ apiKey } = await createAccount(server.url, 'enterprise', 1000));
  });

  after(async () => {
    if (server?.child.exitCode === null) server.child.kill('SIGKILL');
    await upstream?.close();
    await database?.drop();
    if (copy) rmSync(copy.dir, { recursive: true, force: true });
  });

  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('changes compose.ts by its plug line and import alone', () => {
    assert.equal(copy.changedLines, 2);
  });

  it('serves its operation, and sees the end of every request', async () => {
    const first = await call('GET', '/z1/planted');
    assert.equal(first.status, 200);
    assert.deepEqual(await first.json(), { object: 'planted', requests: 0 });
    await call('GET', '/z1/usage');
    const third = await call('GET', '/z1/planted');
    assert.deepEqual(await third.json(), { object: 'planted', requests: 2 });
  });

  it('reaches chat through its context source', async () => {
    const res = await call('POST', '/z1/chat/completions', {
      model: 'PV-TURBO',
      user_id: 'ada',
      messages: [{ role: 'user', content: 'Hello there.' }],
    });
    assert.equal(res.status, 200);
    assert.match(systemPrompt(upstream), /PLANTED-NOTE: the planted capability was asked\./);
  });

  it("is a section of an end user's export and erase", async () => {
    const exported = await call('GET', '/z1/users/ada/export');
    assert.equal(exported.status, 200);
    const body = (await exported.json()) as { planted?: unknown; memories?: unknown };
    assert.deepEqual(body.planted, [{ note: 'planted for ada' }]);
    assert.ok(Array.isArray(body.memories), 'the other sections are still there');
    const erased = await call('DELETE', '/z1/users/ada');
    assert.equal(erased.status, 200);
    assert.equal(((await erased.json()) as { erased: Record<string, number> }).erased.planted, 1);
  });

  it('is closed at the stop', async () => {
    assert.equal(existsSync(closedFile), false);
    server.child.kill('SIGTERM');
    await once(server.child, 'exit');
    assert.equal(readFileSync(closedFile, 'utf8'), 'closed');
  });
});
