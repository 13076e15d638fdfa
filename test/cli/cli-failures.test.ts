import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { createMigratedTestDatabase, postgresOnly } from '../support/databases.js';
import { freePort, pvai, pvaiStatus } from '../support/processes.js';

interface WrongUsage {
  /** The leaf command it exercises (`accounts show`), so that every command is seen to have one. */
  command: string;
  args: string[];
  exit: 1 | 2;
  line: RegExp;
  env?: Record<string, string>;
}

/** The commands `pvai help` and each group's help list, as `group sub` (`documents` under its own name). */
async function leafCommands(env: Record<string, string>): Promise<string[]> {
  const listed = (help: string) =>
    (help.split(/^Commands:$/m)[1] ?? '')
      .split('\n')
      .map((line) => /^ {2}(\S+)/.exec(line)?.[1]?.split('|')[0])
      .filter((name): name is string => name !== undefined && name !== 'help');
  const top = listed((await pvai(['--help'], env)).stdout);
  const leaves: string[] = [];
  for (const name of top) {
    const subs = listed((await pvai([name, '--help'], env)).stdout);
    leaves.push(...(subs.length === 0 ? [name] : subs.map((sub) => `${name} ${sub}`)));
  }
  return leaves;
}

/**
 * Each command of `pvai` given a wrong input, as a user would type it: the answer is one line on stderr saying
 * what is wrong and what to do, never a stack trace, nothing on stdout, exit 1 (2 when the command line itself
 * does not parse).
 */
describe('pvai CLI: every failure is one line with its fix', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pvai-cli-failures-'));
  const env = { PVAI_DATA_DIR: dataDir, DATABASE_URL: '' };
  let accountId = '';
  let closedPort = 0;

  before(async () => {
    const created = await pvai(['accounts', 'create', '--email', 'fails@example.com', '--tier', 'free', '--json'], env);
    accountId = (JSON.parse(created.stdout) as { account: { id: string } }).account.id;
    closedPort = await freePort();
  });

  const usage = (command: string) => new RegExp(`\\(see \`pvai ${command} --help\`\\)$`);
  const cases = (): WrongUsage[] => [
    { command: 'serve', args: ['serve', '--port', '1'], exit: 2, line: /unknown option '--port'/ },
    { command: 'serve', args: ['serve'], exit: 1, line: /^pvai: .*PVAI_PORT/, env: { PVAI_PORT: 'eighty' } },
    {
      command: 'accounts create',
      args: ['accounts', 'create', '--email', 'not-an-email', '--tier', 'free'],
      exit: 1,
      line: /^pvai: INVALID_PARAMETER: email must match format "email"$/,
    },
    {
      command: 'accounts create',
      args: ['accounts', 'create', '--email', 'x@example.com'],
      exit: 2,
      line: /^pvai: required option '--tier <tier>' not specified/,
    },
    { command: 'accounts list', args: ['accounts', 'list', '--all'], exit: 2, line: usage('accounts list') },
    {
      command: 'accounts show',
      args: ['accounts', 'show', 'acct_nope'],
      exit: 1,
      line: /^pvai: NOT_FOUND: No account acct_nope$/,
    },
    { command: 'accounts show', args: ['accounts', 'show'], exit: 2, line: /missing required argument 'account-id'/ },
    {
      command: 'accounts set-password',
      args: ['accounts', 'set-password', '--account', 'acct_nope', '--password', 'short'],
      exit: 1,
      line: /^pvai: INVALID_PARAMETER: A password has at least 8 characters$/,
    },
    {
      command: 'accounts set-tier',
      args: ['accounts', 'set-tier', '--account', accountId, '--tier', 'gold'],
      exit: 1,
      line: /^pvai: INVALID_PARAMETER: tier must be one of free, startup, business, enterprise/,
    },
    {
      command: 'keys create',
      args: ['keys', 'create', '--account', 'acct_nope'],
      exit: 1,
      line: /^pvai: NOT_FOUND: No account acct_nope$/,
    },
    { command: 'keys list', args: ['keys', 'list'], exit: 2, line: usage('keys list') },
    {
      command: 'keys update',
      args: ['keys', 'update', 'key_nope', '--rpm', 'many'],
      exit: 1,
      line: /^pvai: INVALID_PARAMETER: rate_limits\.rpm must be integer$/,
    },
    {
      command: 'keys update',
      args: ['keys', 'update', 'key_nope', '--rpm', '5'],
      exit: 1,
      line: /^pvai: NOT_FOUND: No key key_nope$/,
    },
    {
      command: 'keys revoke',
      args: ['keys', 'revoke', 'key_nope'],
      exit: 1,
      line: /^pvai: NOT_FOUND: No key key_nope$/,
    },
    {
      command: 'credits add',
      args: ['credits', 'add', '--account', accountId, '--amount', 'ten'],
      exit: 1,
      line: /^pvai: INVALID_PARAMETER: amount must be integer/,
    },
    {
      command: 'models pull',
      args: ['models', 'pull', 'model.gguf', '--sha256', 'abcd'],
      exit: 1,
      line: /^pvai: INVALID_PARAMETER: --sha256 takes the file's SHA-256 as 64 hexadecimal characters/,
    },
    {
      command: 'models pull',
      args: ['models', 'pull', 'hf:foo'],
      exit: 1,
      line: /^pvai: INVALID_PARAMETER: not a Hugging Face model file reference: hf:foo \(expected hf:<owner>/,
    },
    {
      command: 'models pull',
      args: ['models', 'pull', 'no-such-model.gguf'],
      exit: 1,
      line: /^pvai: no-such-model\.gguf: no such file or directory \(check the path\)$/,
    },
    { command: 'models setup', args: ['models', 'setup', '--force'], exit: 2, line: usage('models setup') },
    { command: 'doctor', args: ['doctor', '--fix'], exit: 2, line: usage('doctor') },
    {
      command: 'documents add',
      args: ['docs', 'add', '--account', accountId, '--user', 'u1', 'nope.pdf'],
      exit: 1,
      line: /^pvai: nope\.pdf: no such file or directory \(check the path\)$/,
    },
    { command: 'documents list', args: ['docs', 'list', '--account', accountId], exit: 2, line: /'--user <user_id>'/ },
    {
      command: 'documents rm',
      args: ['docs', 'rm', '--account', accountId, '--user', 'u1', 'doc_nope'],
      exit: 1,
      line: /^pvai: NOT_FOUND: No document doc_nope$/,
    },
    { command: '', args: ['frob'], exit: 2, line: /^pvai: unknown command 'frob' \(see `pvai --help`\)$/ },
    {
      command: 'accounts list',
      args: ['accounts', 'list'],
      exit: 1,
      line: /^pvai: cannot reach 127\.0\.0\.1:\d+: nothing listens there \(start the database, or fix DATABASE_URL\)$/,
      env: { DATABASE_URL: `postgres://pvai:pvai@127.0.0.1:${closedPort}/pvai` },
    },
    {
      command: 'accounts list',
      args: ['accounts', 'list'],
      exit: 1,
      line: /: exists and is not a directory \(check the path, or PVAI_DATA_DIR\)$/,
      env: { PVAI_DATA_DIR: join(dataDir, 'pvai.sqlite') },
    },
  ];

  it('has a wrong usage for every command of `pvai help`', async () => {
    const covered = new Set(cases().map((c) => c.command));
    assert.deepEqual(
      (await leafCommands(env)).filter((command) => !covered.has(command)),
      [],
      'commands without a wrong usage in this file',
    );
  });

  it('answers each wrong usage with one line on stderr, no stack, nothing on stdout', async () => {
    const all = cases();
    // Two at a time: each is a Node process loading the service's code, on a 2-core machine.
    const results = new Array<Awaited<ReturnType<typeof pvaiStatus>>>(all.length);
    let next = 0;
    const worker = async () => {
      while (next < all.length) {
        const i = next++;
        const c = all[i] as WrongUsage;
        results[i] = await pvaiStatus(c.args, { ...env, ...c.env });
      }
    };
    await Promise.all([worker(), worker()]);
    all.forEach((c, i) => {
      const { code, stdout, stderr } = results[i] as { code: number; stdout: string; stderr: string };
      const what = `pvai ${c.args.join(' ')}`;
      assert.equal(stdout, '', `${what}: nothing on stdout`);
      const lines = stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `${what}: one line on stderr, got:\n${stderr}`);
      assert.doesNotMatch(stderr, /^\s+at /m, `${what}: no stack`);
      assert.match(lines[0] as string, c.line, what);
      assert.equal(code, c.exit, `${what}: exit status (stderr: ${stderr})`);
    });
  });

  describe('an unexpected error', () => {
    const corrupt = mkdtempSync(join(tmpdir(), 'pvai-cli-corrupt-'));
    before(() => writeFileSync(join(corrupt, 'pvai.sqlite'), 'not a database, '.repeat(64)));

    it('is its message and how to see the stack, in one line', async () => {
      const { code, stdout, stderr } = await pvaiStatus(['accounts', 'list'], { ...env, PVAI_DATA_DIR: corrupt });
      assert.equal(code, 1);
      assert.equal(stdout, '');
      assert.equal(stderr, 'pvai: file is not a database (run with PVAI_DEBUG=1 or --debug for the stack)\n');
    });

    it('prints its stack with PVAI_DEBUG=1 or --debug', async () => {
      for (const [args, extra] of [
        [['accounts', 'list'], { PVAI_DEBUG: '1' }],
        [['accounts', 'list', '--debug'], {}],
      ] as const) {
        const { code, stderr } = await pvaiStatus([...args], { ...env, PVAI_DATA_DIR: corrupt, ...extra });
        assert.equal(code, 1);
        assert.match(stderr, /^SqliteError: file is not a database\n\s+at /);
      }
    });
  });

  it('on PostgreSQL: an unknown account, a database that does not exist, a wrong password', {
    skip: postgresOnly(),
  }, async () => {
    const database = await createMigratedTestDatabase('postgres');
    try {
      const url = new URL(database.databaseUrl ?? '');
      const missing = new URL(url);
      missing.pathname = '/pvai_no_such_database';
      const wrong = new URL(url);
      wrong.password = 'not-the-password';
      for (const [databaseUrl, args, line] of [
        [url, ['accounts', 'show', 'acct_nope'], /^pvai: NOT_FOUND: No account acct_nope$/],
        [
          missing,
          ['accounts', 'list'],
          /^pvai: database "pvai_no_such_database" does not exist \(create it, e\.g\. `createdb`, or fix the database name in DATABASE_URL\)$/,
        ],
        [
          wrong,
          ['keys', 'list', '--account', 'acct_nope'],
          /^pvai: password authentication failed for user "\w+" \(fix the user or password in DATABASE_URL\)$/,
        ],
      ] as const) {
        const { code, stdout, stderr } = await pvaiStatus([...args], {
          PVAI_DATA_DIR: dataDir,
          DATABASE_URL: databaseUrl.toString(),
        });
        assert.equal(code, 1, stderr);
        assert.equal(stdout, '');
        assert.equal(stderr.trimEnd().split('\n').length, 1, stderr);
        assert.match(stderr.trimEnd(), line);
      }
    } finally {
      await database.drop();
    }
  });
});
