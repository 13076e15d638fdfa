import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { docxFixture } from '../support/fixtures.js';
import { pvai } from '../support/processes.js';

/** `pvai documents add|list|rm` on an embedded data dir (no embedding model there: lexical only). */
describe('pvai documents', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let accountId: string;

  before(async () => {
    database = await createTestDatabase('sqlite');
    env = { PVAI_DATA_DIR: database.dataDir, DATABASE_URL: '' };
    const { stdout } = await pvai(
      ['accounts', 'create', '--email', 'cli@example.com', '--tier', 'free', '--json'],
      env,
    );
    accountId = (JSON.parse(stdout) as { account: { id: string } }).account.id;
  });
  after(() => database.drop());

  it('adds files of two formats, lists them ready, and removes one', async () => {
    const md = join(database.dataDir, 'notes.md');
    writeFileSync(md, '# Notes\n\nThe boiler is serviced every March.');
    const docx = join(database.dataDir, 'plan.docx');
    writeFileSync(docx, await docxFixture(['The plan has three phases.']));
    const added = await pvai(['docs', 'add', '--account', accountId, '--user', 'u', md, docx, '--json'], env);
    const docs = (JSON.parse(added.stdout) as { data: Array<{ id: string; title: string; status: string }> }).data;
    assert.deepEqual(
      docs.map((d) => [d.title, d.status]),
      [
        ['notes.md', 'ready'],
        ['plan.docx', 'ready'],
      ],
    );
    const listed = await pvai(['docs', 'list', '--account', accountId, '--user', 'u', '--json'], env);
    assert.equal((JSON.parse(listed.stdout) as { data: unknown[] }).data.length, 2);
    const other = await pvai(['docs', 'list', '--account', accountId, '--user', 'someone-else', '--json'], env);
    assert.deepEqual((JSON.parse(other.stdout) as { data: unknown[] }).data, []);
    await pvai(['docs', 'rm', '--account', accountId, '--user', 'u', docs[0]?.id ?? ''], env);
    const after = await pvai(['docs', 'list', '--account', accountId, '--user', 'u', '--json'], env);
    assert.deepEqual(
      (JSON.parse(after.stdout) as { data: Array<{ id: string }> }).data.map((d) => d.id),
      [docs[1]?.id],
    );
  });

  it('prints a headed table and counts in the right number ("1 document, 1 chunk") without --json', async () => {
    const note = join(database.dataDir, 'short.txt');
    writeFileSync(note, 'The gate code changes on Mondays.');
    const added = (await pvai(['docs', 'add', '--account', accountId, '--user', 'table-user', note], env)).stdout;
    const [header, row, summary, ...rest] = added.trimEnd().split('\n');
    assert.match(header ?? '', /^ID +TITLE +CHUNKS {2}STATUS$/);
    assert.match(row ?? '', /^doc_\S+ +short\.txt +1 +ready$/);
    assert.equal(summary, 'added 1 document, 1 chunk');
    assert.deepEqual(rest, []);
    const listed = (await pvai(['docs', 'list', '--account', accountId, '--user', 'table-user'], env)).stdout;
    assert.deepEqual(listed.trimEnd().split('\n'), [header, row]);
    const none = await pvai(['docs', 'list', '--account', accountId, '--user', 'nobody-here'], env);
    assert.equal(none.stdout, 'no documents\n');
  });
});
