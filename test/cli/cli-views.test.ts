import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { plural, table } from '../../src/cli/table.js';
import { backends, createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';
import { pvai, ROOT } from '../support/processes.js';

/** The cells of a headed table's lines, cut at the columns its header row starts (two spaces apart at least). */
function columns(text: string): { header: string[]; rows: string[][] } {
  const [head = '', ...lines] = text.split('\n');
  const starts = [...head.matchAll(/(?:^|(?<= {2}))(\S+(?: \S+)*)/g)].map((m) => m.index);
  const cut = (line: string) => starts.map((s, i) => line.slice(s, starts[i + 1]).trim());
  for (const line of lines) {
    // Aligned: every cell starts at its header's column, after a space (or at the line's start).
    for (const s of starts.slice(1)) if (line.length > s) assert.equal(line[s - 1], ' ', `aligned: ${line}`);
  }
  return { header: cut(head), rows: lines.map(cut) };
}

describe('pvai CLI: --version', () => {
  it('prints the version in package.json', async () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    assert.equal((await pvai(['--version'], { DATABASE_URL: '' })).stdout, `${version}\n`);
  });
});

describe('pvai CLI: table and plural', () => {
  it('pads columns to the widest cell under a header row, and says when there is nothing', () => {
    assert.equal(
      table(
        ['ID', 'NAME'],
        [
          ['a', 'first'],
          ['longer', ''],
        ],
        'none',
      ),
      'ID      NAME\na       first\nlonger',
    );
    assert.equal(table(['ID'], [], 'no keys'), 'no keys');
    assert.deepEqual(
      [0, 1, 2].map((n) => plural(n, 'chunk')),
      ['0 chunks', '1 chunk', '2 chunks'],
    );
  });
});

for (const backend of backends()) {
  describe(`pvai CLI: accounts list/show and headed tables (${backend})`, () => {
    let database: TestDatabase;
    let env: Record<string, string>;
    const ids: string[] = [];

    before(async () => {
      database = await createMigratedTestDatabase(backend);
      env = { PVAI_DATA_DIR: database.dataDir, DATABASE_URL: database.databaseUrl ?? '' };
      for (const [email, tier, credits] of [
        ['one@example.com', 'free', '1'],
        ['someone.with.a.long.address@example.com', 'business', '2500'],
      ] as const) {
        const args = ['accounts', 'create', '--email', email, '--tier', tier, '--credits', credits, '--json'];
        ids.push((JSON.parse((await pvai(args, env)).stdout) as { account: { id: string } }).account.id);
      }
    });
    after(() => database?.drop());

    it('lists every account in a headed table, and as the admin API does with --json', async () => {
      const { header, rows } = columns((await pvai(['accounts', 'list'], env)).stdout.trimEnd());
      assert.deepEqual(header, ['ID', 'EMAIL', 'TIER', 'CREDITS', 'CREATED']);
      assert.deepEqual(
        rows.map((r) => r.slice(0, 4)).sort((a, b) => (a[1] ?? '').localeCompare(b[1] ?? '')),
        [
          [ids[0], 'one@example.com', 'free', '1'],
          [ids[1], 'someone.with.a.long.address@example.com', 'business', '2500'],
        ],
      );
      const json = JSON.parse((await pvai(['accounts', 'list', '--json'], env)).stdout) as {
        object: string;
        data: Array<{ id: string; credits: number }>;
      };
      assert.equal(json.object, 'list');
      assert.deepEqual(json.data.map((a) => a.id).sort(), [...ids].sort());
    });

    it('shows one account with its balance and its keys (prefixes, never a secret), plurals right', async () => {
      const [first = ''] = ids;
      const key = JSON.parse(
        (await pvai(['keys', 'create', '--account', first, '--name', 'ci', '--json'], env)).stdout,
      );
      await pvai(['keys', 'revoke', key.key.id], env);
      const shown = (await pvai(['accounts', 'show', first], env)).stdout;
      assert.match(shown, new RegExp(`^account {2}${first}$`, 'm'));
      assert.match(shown, /^balance {2}1 credit$/m, 'one credit, not "1 credits"');
      assert.match(shown, /^keys {5}2 keys, 1 active$/m);
      assert.ok(!shown.includes(key.api_key), 'no secret');
      const { header, rows } = columns(shown.split('\n\n')[1]?.trimEnd() ?? '');
      assert.deepEqual(header, ['ID', 'PREFIX', 'NAME', 'END USER', 'CREATED', 'STATUS']);
      assert.deepEqual(
        rows.map((r) => [r[2], r[5]?.replace(/\d{4}-\d\d-\d\d/, 'DATE')]),
        [
          ['default', 'active'],
          ['ci', 'revoked DATE'],
        ],
      );

      const json = JSON.parse((await pvai(['accounts', 'show', first, '--json'], env)).stdout) as {
        account: { id: string; credits: number };
        keys: Array<{ name: string; revoked_at: string | null }>;
      };
      assert.equal(json.account.credits, 1);
      assert.deepEqual(
        json.keys.map((k) => [k.name, k.revoked_at !== null]),
        [
          ['default', false],
          ['ci', true],
        ],
      );

      const keys = (await pvai(['keys', 'list', '--account', first], env)).stdout.trimEnd();
      assert.deepEqual(columns(keys).header, ['ID', 'PREFIX', 'NAME', 'END USER', 'CREATED', 'STATUS']);
      assert.equal(columns(keys).rows.length, 2);

      assert.equal(
        (await pvai(['credits', 'add', '--account', ids[1] ?? '', '--amount', '1'], env)).stdout,
        `account ${ids[1]} has 2501 credits\n`,
      );
    });
  });
}
