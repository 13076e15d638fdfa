import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DataSource } from 'typeorm';
import { SqlChunkIndex } from '../../src/retrieval/sql/sql-chunk-index.js';
import { MIGRATIONS, openDb, sqlitePath } from '../../src/storage/data-source.js';
import { LexicalTerms1764600000000 } from '../../src/storage/migrations/1764600000000-lexical-terms.js';
import { backends, createTestDatabase, type TestDatabase } from '../support/databases.js';

/** A DataSource on the test database with the given migrations (as the server's, without its pragmas). */
function dataSource(database: TestDatabase, migrations: typeof MIGRATIONS): DataSource {
  const common = { migrations, migrationsTableName: 'pvai_migrations', logging: false } as const;
  return database.databaseUrl
    ? new DataSource({ type: 'postgres', url: database.databaseUrl, ...common })
    : new DataSource({ type: 'better-sqlite3', database: sqlitePath(database.dataDir), ...common });
}

/** Where the migration under test stands among all of them (later ones are undone before it). */
const LEXICAL = MIGRATIONS.indexOf(LexicalTerms1764600000000);

/**
 * An index written before lexical search moved to stored terms (FTS5 / tsvector) is still searchable
 * after the upgrade: the migration back-fills each chunk's terms from its document chunk or memory.
 */
for (const backend of backends()) {
  describe(`the lexical-terms migration (${backend})`, () => {
    let database: TestDatabase;
    const p = (i: number) => (backend === 'postgres' ? `$${i}` : '?');

    before(async () => {
      database = await createTestDatabase(backend);
      const old = dataSource(database, MIGRATIONS.slice(0, LEXICAL));
      await old.initialize();
      await old.runMigrations();
      const insert = (table: string, row: Record<string, unknown>) =>
        old.query(
          `INSERT INTO ${table} (${Object.keys(row).join(', ')}) VALUES (${Object.keys(row)
            .map((_, i) => p(i + 1))
            .join(', ')})`,
          Object.values(row),
        );
      const tenant = { account_id: 'acct_1', user_id: 'u1' };
      await insert('rag_documents', {
        id: 'doc_1',
        ...tenant,
        title: 'Wings',
        content_type: 'text/plain',
        size_bytes: 40,
        metadata: '{}',
        text: 'Swept wings delay the drag rise near Mach one.',
        pages: '[]',
        status: 'ready',
        created_at: 1,
      });
      await insert('rag_chunks', {
        id: 'chk_1',
        document_id: 'doc_1',
        ...tenant,
        ordinal: 0,
        text: 'Swept wings delay the drag rise near Mach one.',
        char_start: 0,
        char_end: 47,
      });
      await insert('memories', {
        id: 'mem_1',
        ...tenant,
        content: 'The user is allergic to peanuts.',
        metadata: '{}',
        source: 'api',
        created_at: 1,
        updated_at: 1,
      });
      const indexRow = (accountId: string, documentId: string, chunkId: string) =>
        backend === 'postgres'
          ? old.query(
              `INSERT INTO rag_index_chunks (account_id, user_id, document_id, chunk_id, tsv)
               VALUES ($1, 'u1', $2, $3, ''::tsvector)`,
              [accountId, documentId, chunkId],
            )
          : insert('rag_index_chunks', {
              account_id: accountId,
              user_id: 'u1',
              document_id: documentId,
              chunk_id: chunkId,
            });
      await indexRow('acct_1', 'doc_1', 'chk_1');
      await indexRow('acct_1#memory', 'mem_1', 'mem_1');
      await old.destroy();
    });
    after(async () => {
      await database.drop();
    });

    it('back-fills the terms, so old chunks and memories are found by words after the upgrade', async () => {
      const db = await openDb({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
      try {
        const index = new SqlChunkIndex(db);
        const docs = await index.search(
          { accountId: 'acct_1', userId: 'u1' },
          { text: 'wing drag', k: 5, mode: 'lexical' },
        );
        assert.deepEqual(
          docs.map((h) => h.chunkId),
          ['chk_1'],
        );
        const memories = await index.search(
          { accountId: 'acct_1#memory', userId: 'u1' },
          { text: 'peanut allergy?', k: 5, mode: 'lexical' },
        );
        assert.deepEqual(
          memories.map((h) => h.chunkId),
          ['mem_1'],
        );
        const other = await index.search(
          { accountId: 'acct_1', userId: 'u2' },
          { text: 'wing drag', k: 5, mode: 'lexical' },
        );
        assert.deepEqual(other, []);
        const rows = await db.query<{ terms: string }>("SELECT terms FROM rag_index_chunks WHERE chunk_id = 'chk_1'");
        assert.equal(rows[0]?.terms, 'swept wing delai drag rise near mach on');
        const leftovers =
          db.dialect === 'postgres'
            ? await db.query(
                "SELECT 1 FROM information_schema.columns WHERE table_name = 'rag_index_chunks' AND column_name = 'tsv'",
              )
            : await db.query("SELECT 1 FROM sqlite_master WHERE name = 'rag_index_fts'");
        assert.equal(leftovers.length, 0, 'the old lexical index is gone');
        await index.close();
      } finally {
        await db.close();
      }
    });

    it('goes back down to the previous lexical index, rebuilt from the same texts', async () => {
      const all = dataSource(database, MIGRATIONS);
      await all.initialize();
      try {
        for (let i = MIGRATIONS.length - 1; i >= LEXICAL; i--) await all.undoLastMigration();
        const found =
          backend === 'postgres'
            ? await all.query(
                "SELECT chunk_id FROM rag_index_chunks WHERE tsv @@ to_tsquery('english', 'peanuts') ORDER BY seq",
              )
            : await all.query(
                `SELECT c.chunk_id FROM rag_index_fts JOIN rag_index_chunks c ON c.seq = rag_index_fts.rowid
                 WHERE rag_index_fts MATCH 'peanuts'`,
              );
        assert.deepEqual(found, [{ chunk_id: 'mem_1' }]);
      } finally {
        await all.destroy();
      }
    });
  });
}
