import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pvaiStatus } from '../support/processes.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The CLI's commands that do what an admin operation does refuse exactly what that operation refuses, with its
 * code and message: each case is sent to the admin API over HTTP and given to the `pvai` process on the same
 * data directory, and both answers must be the same refusal. Nothing refused is written.
 */
describe('pvai CLI validates as the admin API does (one schema)', () => {
  let server: TestServer;
  let accountId = '';
  let env: Record<string, string>;

  before(async () => {
    server = await startTestServer('sqlite');
    accountId = (await server.createAccount('startup')).accountId;
    env = { PVAI_DATA_DIR: server.dataDir, DATABASE_URL: '' };
  });
  after(async () => {
    await server?.close();
  });

  const HOSTILE_EMAIL = '<img src=x onerror=alert(1)>@example.test';
  const cases: Array<{ name: string; api: () => [string, string, unknown?]; cli: () => string[] }> = [
    {
      name: 'an email with markup',
      api: () => ['POST', '/admin/accounts', { email: HOSTILE_EMAIL, tier: 'startup' }],
      cli: () => ['accounts', 'create', '--email', HOSTILE_EMAIL, '--tier', 'startup'],
    },
    {
      name: 'an email too long',
      api: () => ['POST', '/admin/accounts', { email: `${'a'.repeat(250)}@x.io`, tier: 'free' }],
      cli: () => ['accounts', 'create', '--email', `${'a'.repeat(250)}@x.io`, '--tier', 'free'],
    },
    {
      name: 'an unknown tier',
      api: () => ['POST', '/admin/accounts', { email: 'gold@example.test', tier: 'gold' }],
      cli: () => ['accounts', 'create', '--email', 'gold@example.test', '--tier', 'gold'],
    },
    {
      name: 'credits that are not a number',
      api: () => ['POST', '/admin/accounts', { email: 'ten@example.test', tier: 'free', credits: 'ten' }],
      cli: () => ['accounts', 'create', '--email', 'ten@example.test', '--tier', 'free', '--credits', 'ten'],
    },
    {
      name: 'credits over the ceiling',
      api: () => ['POST', '/admin/accounts', { email: 'rich@example.test', tier: 'free', credits: 1_000_000_000_001 }],
      cli: () => ['accounts', 'create', '--email', 'rich@example.test', '--tier', 'free', '--credits', '1000000000001'],
    },
    {
      name: 'a password too short',
      api: () => ['POST', '/admin/accounts', { email: 'pw@example.test', tier: 'free', password: 'short' }],
      cli: () => ['accounts', 'create', '--email', 'pw@example.test', '--tier', 'free', '--password', 'short'],
    },
    {
      name: 'an unknown tier on set-tier',
      api: () => ['PATCH', `/admin/accounts/${accountId}`, { tier: 'gold' }],
      cli: () => ['accounts', 'set-tier', '--account', accountId, '--tier', 'gold'],
    },
    {
      name: 'an empty end user on a key',
      api: () => ['POST', `/admin/accounts/${accountId}/keys`, { user_id: '' }],
      cli: () => ['keys', 'create', '--account', accountId, '--user-id', ''],
    },
    {
      name: 'an end user with a control character',
      api: () => ['POST', `/admin/accounts/${accountId}/keys`, { user_id: 'tab\there' }],
      cli: () => ['keys', 'create', '--account', accountId, '--user-id', 'tab\there'],
    },
    {
      name: 'an end user too long',
      api: () => ['POST', `/admin/accounts/${accountId}/keys`, { user_id: 'u'.repeat(257) }],
      cli: () => ['keys', 'create', '--account', accountId, '--user-id', 'u'.repeat(257)],
    },
    {
      name: 'a key name too long',
      api: () => ['POST', `/admin/accounts/${accountId}/keys`, { name: 'n'.repeat(129) }],
      cli: () => ['keys', 'create', '--account', accountId, '--name', 'n'.repeat(129)],
    },
    {
      name: 'an account id too long',
      api: () => ['POST', `/admin/accounts/${'a'.repeat(65)}/keys`, {}],
      cli: () => ['keys', 'create', '--account', 'a'.repeat(65)],
    },
    {
      name: 'an account id too long, listing keys',
      api: () => ['GET', `/admin/accounts/${'a'.repeat(65)}/keys`],
      cli: () => ['keys', 'list', '--account', 'a'.repeat(65)],
    },
    {
      name: 'a key id too long',
      api: () => ['DELETE', `/admin/keys/${'k'.repeat(65)}`],
      cli: () => ['keys', 'revoke', 'k'.repeat(65)],
    },
    {
      name: 'no credits to add',
      api: () => ['POST', `/admin/accounts/${accountId}/credits`, { amount: 0 }],
      cli: () => ['credits', 'add', '--account', accountId, '--amount', '0'],
    },
    {
      name: 'a fraction of a credit',
      api: () => ['POST', `/admin/accounts/${accountId}/credits`, { amount: 1.5 }],
      cli: () => ['credits', 'add', '--account', accountId, '--amount', '1.5'],
    },
  ];

  // Every case as JSON (the admin API's error body itself); the text line, one formatting path, on a few. The
  // CLI runs are started together, a few at a time (each is a Node process that loads the service's code).
  const TEXT_CASES = 3;
  const runs = new Map<string, Promise<{ code: number; stdout: string; stderr: string }>>();
  const slots = { free: 4, waiting: [] as Array<() => void> };
  const cliRun = (args: string[]) => {
    const key = JSON.stringify(args);
    let run = runs.get(key);
    if (!run) {
      run = (async () => {
        if (slots.free === 0) await new Promise<void>((r) => slots.waiting.push(r));
        else slots.free -= 1;
        try {
          return await pvaiStatus(args, env);
        } finally {
          const next = slots.waiting.shift();
          if (next) next();
          else slots.free += 1;
        }
      })();
      runs.set(key, run);
    }
    return run;
  };
  const textArgs = (i: number) => (cases[i] as (typeof cases)[number]).cli();
  before(() => {
    cases.forEach((c, i) => {
      void cliRun([...c.cli(), '--json']).catch(() => undefined);
      if (i < TEXT_CASES) void cliRun(textArgs(i)).catch(() => undefined);
    });
  });

  cases.forEach((c, i) => {
    it(`refuses ${c.name} with the admin API's code and message`, async () => {
      const [method, path, body] = c.api();
      const api = await server.request<{ code: string; message: string }>(method, path, {
        admin: true,
        ...(body !== undefined ? { body } : {}),
      });
      assert.equal(api.status, 400, `the admin API refuses ${c.name}: ${api.text}`);
      const json = await cliRun([...c.cli(), '--json']);
      assert.notEqual(json.code, 0, `the CLI refuses ${c.name}: ${json.stdout}`);
      assert.equal(json.stdout, '', 'nothing is printed as done');
      assert.deepEqual(JSON.parse(json.stderr), api.body);
      if (i >= TEXT_CASES) return;
      const cli = await cliRun(textArgs(i));
      assert.notEqual(cli.code, 0);
      assert.equal(cli.stdout, '');
      assert.equal(cli.stderr.trim(), `pvai: ${api.body.code}: ${api.body.message}`);
    });
  });

  it('wrote nothing it refused: no account with the markup email, no key beyond the first', async () => {
    const list = await server.request<{ data: Array<{ email: string }> }>('GET', '/admin/accounts', { admin: true });
    assert.deepEqual(
      list.body.data.filter((a) => a.email.includes('<') || a.email.endsWith('@example.test')),
      [],
    );
    const keys = await server.request<{ data: unknown[] }>('GET', `/admin/accounts/${accountId}/keys`, { admin: true });
    assert.equal(keys.body.data.length, 1);
    const account = await server.request<{ credits: number; tier: string }>('GET', `/admin/accounts/${accountId}`, {
      admin: true,
    });
    assert.equal(account.body.tier, 'startup');
  });

  it('takes what the API takes, exactly as given (an end user with a leading space)', async () => {
    const cli = await pvaiStatus(['keys', 'create', '--account', accountId, '--user-id', ' ws-X', '--json'], env);
    assert.equal(cli.code, 0, cli.stderr);
    assert.equal(JSON.parse(cli.stdout).key.user_id, ' ws-X');
  });
});
