import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk } from '../../../src/retrieval/index.js';
import { SqlChunkIndex } from '../../../src/retrieval/sql/sql-chunk-index.js';
import { openDb } from '../../../src/storage/index.js';
import { createTestDatabase, postgresOnly } from '../../support/databases.js';

const tenant = { accountId: 'acct_stats', userId: 'u1' };
/** The exact-rerank read of SqlChunkIndex's dense search. */
const RERANK_READ = `EXPLAIN SELECT chunk_id, embedding FROM rag_index_chunks
  WHERE account_id = $1 AND user_id = $2 AND chunk_id = ANY($3::text[]) AND embedding IS NOT NULL`;

function chunks(documentId: string, n: number): Chunk[] {
  return Array.from({ length: n }, (_, i) => {
    const text = `Section ${i} of ${documentId}: gravel, basalt and granite.`;
    return { id: `${documentId}_c${i}`, documentId, ordinal: i, text, charStart: 0, charEnd: text.length, page: null };
  });
}

describe('planner statistics of the PostgreSQL document index', {
  skip: postgresOnly(),
}, () => {
  it('analyses the table after a bulk write, so the rerank read takes the tenant+chunk index at once', async () => {
    const database = await createTestDatabase('postgres');
    const db = await openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolSize: 2 });
    const index = new SqlChunkIndex(db);
    try {
      await index.prepare({ id: 'stats-model', dimension: 4 });
      // A small write looks at nothing.
      await index.putDocuments(tenant, [{ documentId: 'small', chunks: chunks('small', 10), fresh: true }]);
      await index.statistics.settled();
      assert.equal(index.statistics.analyzed, 0);

      // 6,000 chunks in one write, as an ingestion backlog writes them: past the 5,000-row look.
      const documents = Array.from({ length: 60 }, (_, d) => ({
        documentId: `doc${d}`,
        chunks: chunks(`doc${d}`, 100),
        fresh: true,
      }));
      await index.putDocuments(tenant, documents);
      await index.statistics.settled();
      assert.equal(index.statistics.analyzed, 1, 'never analysed: ANALYZE ran');
      const [stats] = await db.query<{ tuples: number }>(
        "SELECT reltuples AS tuples FROM pg_class WHERE oid = 'rag_index_chunks'::regclass",
      );
      assert.equal(Number(stats?.tuples), 6010);
      const ids = ['doc0_c1', 'doc3_c7', 'doc5_c9'];
      const plan = await db.query<{ 'QUERY PLAN': string }>(RERANK_READ, [tenant.accountId, tenant.userId, ids]);
      assert.match(
        plan.map((r) => r['QUERY PLAN']).join('\n'),
        /rag_index_chunks_id/,
        'the read probes the unique (account, user, chunk) index',
      );
    } finally {
      await index.close();
      await db.close();
      await database.drop();
    }
  });

  it('analyses again only once a quarter of the table was written since', async () => {
    const database = await createTestDatabase('postgres');
    const db = await openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolSize: 2 });
    const index = new SqlChunkIndex(db, { statisticsCheckEvery: 100 });
    const put = async (documentId: string, n: number) => {
      await index.putDocuments(tenant, [{ documentId, chunks: chunks(documentId, n), fresh: true }]);
      await index.statistics.settled();
      return index.statistics.analyzed;
    };
    try {
      assert.equal(await put('a', 600), 1, 'never analysed');
      // 600 rows known: a quarter and 50 is 200.
      assert.equal(await put('b', 150), 1, '150 rows written since: a look, no ANALYZE');
      assert.equal(await put('c', 100), 2, '250 rows written since');
    } finally {
      await index.close();
      await db.close();
      await database.drop();
    }
  });
});
