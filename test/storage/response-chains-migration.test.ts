import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DataSource } from 'typeorm';
import { chainConversation, chainItems } from '../../src/responses/chain.js';
import { SqlResponseStore } from '../../src/responses/sql-response-store.js';
import { MIGRATIONS, openDb, sqlitePath } from '../../src/storage/data-source.js';
import { ResponseChains1796000000000 } from '../../src/storage/migrations/1796000000000-response-chains.js';
import { backends, createTestDatabase, type TestDatabase } from '../support/databases.js';

/** Where the migration under test stands among all of them. */
const CHAINS = MIGRATIONS.indexOf(ResponseChains1796000000000);

const u = (content: string) => ({ role: 'user' as const, content });
const a = (content: string) => ({ role: 'assistant' as const, content });

/**
 * Responses stored before chains (each with its whole conversation, no link) read the same after the upgrade,
 * and a response stored after continues them with a link: its chain is the old row's whole conversation, then
 * its own turn.
 */
for (const backend of backends()) {
  describe(`the response-chains migration (${backend})`, () => {
    let database: TestDatabase;
    const whole = [u('Hi, I am Ada.'), a('Hello Ada.'), u('I live in Paris.'), a('Noted.')];

    before(async () => {
      database = await createTestDatabase(backend);
      const common = { migrations: MIGRATIONS.slice(0, CHAINS), migrationsTableName: 'pvai_migrations' } as const;
      const old = database.databaseUrl
        ? new DataSource({ type: 'postgres', url: database.databaseUrl, ...common })
        : new DataSource({ type: 'better-sqlite3', database: sqlitePath(database.dataDir), ...common });
      await old.initialize();
      await old.runMigrations();
      const p = (i: number) => (backend === 'postgres' ? `$${i}` : '?');
      // As the code before chains stored them: the first turn, then the second holding both turns whole.
      const rows: Array<[string, unknown[]]> = [
        ['resp_old1', whole.slice(0, 2)],
        ['resp_old2', whole],
      ];
      for (const [i, [id, conversation]] of rows.entries()) {
        const body = { id, object: 'response', previous_response_id: i === 0 ? null : 'resp_old1' };
        await old.query(
          `INSERT INTO responses (id, account_id, user_id, created_at, body, conversation)
           VALUES (${[1, 2, 3, 4, 5, 6].map(p).join(', ')})`,
          [id, 'acct_1', 'ada', i + 1, JSON.stringify(body), JSON.stringify(conversation)],
        );
        const item = { type: 'message', role: 'user', content: whole[i * 2]?.content };
        await old.query(
          `INSERT INTO response_items (response_id, kind, ordinal, id, account_id, user_id, item)
           VALUES (${[1, 2, 3, 4, 5, 6, 7].map(p).join(', ')})`,
          [id, 'input', 0, `msg_old${i + 1}`, 'acct_1', 'ada', JSON.stringify(item)],
        );
      }
      await old.destroy();
    });
    after(() => database.drop());

    it('reads old rows whole, and chains a new response to them', async () => {
      const db = await openDb({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
      try {
        const store = new SqlResponseStore(db);
        const old = await store.chain('acct_1', 'resp_old2');
        assert.ok(old);
        assert.equal(old.responses.length, 1, 'no link: its conversation is whole');
        assert.equal(old.missing, null);
        assert.equal(old.depth, 1);
        assert.equal(old.contextBytes, JSON.stringify(whole).length);
        assert.deepEqual(chainConversation(old), whole);

        const turn = [u('What is my name?'), a('Ada.')];
        const previous = old.responses[0];
        assert.ok(previous);
        await store.put({
          ...previous,
          id: 'resp_new',
          createdAt: 3,
          previousId: 'resp_old2',
          conversation: turn,
          input: [{ id: 'msg_new', item: { type: 'message', role: 'user', content: 'What is my name?' } }],
          output: [{ id: 'msg_out', item: { type: 'message', role: 'assistant', content: 'Ada.' } }],
        });
        const chained = await store.chain('acct_1', 'resp_new');
        assert.ok(chained);
        assert.deepEqual(
          chained.responses.map((r) => r.id),
          ['resp_old2', 'resp_new'],
        );
        assert.deepEqual(chainConversation(chained), [...whole, ...turn]);
        assert.deepEqual(
          chainItems(chained).map((i) => i.id),
          ['msg_old2', 'msg_new'],
        );
        assert.equal(chained.depth, 2);
        assert.equal(chained.contextBytes, JSON.stringify(whole).length + JSON.stringify(turn).length);
        assert.equal(await store.chain('acct_2', 'resp_new'), undefined, "another account's is absent");
      } finally {
        await db.close();
      }
    });
  });
}
