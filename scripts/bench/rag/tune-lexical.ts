/**
 * npx tsx scripts/bench/rag/tune-lexical.ts — the two lexical changes bench:rag points at, measured:
 * (1) SQLite: FTS5 latency at 100k chunks with the query as is vs. English stop words removed (every
 *     Cranfield question has "what"/"the"/"of", so the OR query matches nearly every chunk);
 * (2) PostgreSQL (DATABASE_URL): nDCG@10 of ts_rank_cd (the adapter's) against ts_rank with and without
 *     length normalisation, on the same tsvectors.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { queryTerms, SqlChunkIndex } from '../../../src/rag/sql-chunk-index.js';
import type { Tenant } from '../../../src/rag/types.js';
import { openDb } from '../../../src/storage/index.js';
import { createTestDatabase } from '../../../test/support/databases.js';
import { ROOT, table } from '../lib.js';
import { benchEmbedder, loadCorpus } from './corpus.js';
import { grow } from './latency.js';
import { documentsOf, evaluate, percentile } from './metrics.js';

const tenant: Tenant = { accountId: 'a', userId: 'u' };
const stopWords = new Set(
  JSON.parse(
    readFileSync(join(ROOT, 'node_modules/wink-nlp-utils/src/dictionaries/stop_words.json'), 'utf8'),
  ) as string[],
);
const withoutStopWords = (q: string) =>
  (q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !stopWords.has(w)).join(' ');

const embedder = benchEmbedder();
const corpus = await loadCorpus(embedder);
await embedder.close();
const embedding = { id: embedder.id, dimension: 384 };
const rows: Array<[string, string]> = [];

{
  const database = await createTestDatabase('sqlite');
  const db = await openDb({ dataDir: database.dataDir, owner: true });
  const index = new SqlChunkIndex(db);
  await index.prepare(embedding);
  await grow(index, tenant, corpus, 0, 100_000);
  for (const [label, text] of [
    ['as is', (q: string) => q],
    ['stop words removed', withoutStopWords],
  ] as const) {
    const samples: number[] = [];
    for (const q of corpus.queries.slice(0, 60)) {
      const t0 = performance.now();
      await index.search(tenant, { text: text(q.text), k: 10, mode: 'lexical' });
      samples.push(performance.now() - t0);
    }
    rows.push([
      `SQLite FTS5 lexical at 100k chunks, query ${label}: p50 / p95 ms (60 queries)`,
      `${percentile(samples, 0.5).toFixed(1)} / ${percentile(samples, 0.95).toFixed(1)}`,
    ]);
  }
  await db.close();
  await database.drop();
}

if (process.env.DATABASE_URL) {
  const database = await createTestDatabase('postgres');
  const db = await openDb({ dataDir: database.dataDir, databaseUrl: database.databaseUrl });
  const index = new SqlChunkIndex(db);
  await index.prepare(embedding);
  const byDoc = new Map<string, typeof corpus.chunks>();
  for (const c of corpus.chunks) byDoc.set(c.documentId, [...(byDoc.get(c.documentId) ?? []), c]);
  for (const [doc, chunks] of byDoc) await index.putChunks(tenant, doc, chunks);
  const docOf = new Map(corpus.chunks.map((c) => [c.id, c.documentId]));
  for (const rank of ['ts_rank_cd(tsv, q)', 'ts_rank(tsv, q)', 'ts_rank(tsv, q, 1)', 'ts_rank(tsv, q, 2)']) {
    const runs = new Map<string, string[]>();
    for (const q of corpus.queries) {
      const hits = await db.query<{ id: string }>(
        `SELECT chunk_id AS id, ${rank} AS s FROM rag_index_chunks, to_tsquery('english', $1) q
         WHERE tsv @@ q AND account_id = $2 AND user_id = $3 ORDER BY s DESC, seq LIMIT 300`,
        [queryTerms(q.text).join(' | '), tenant.accountId, tenant.userId],
      );
      runs.set(q.id, documentsOf(hits.map((h) => ({ documentId: docOf.get(h.id) ?? h.id }))));
    }
    const quality = evaluate(runs, corpus.qrels);
    rows.push([
      `PostgreSQL lexical ${rank}: nDCG@10 / recall@100`,
      `${quality.ndcg10.toFixed(3)} / ${quality.recall100.toFixed(3)}`,
    ]);
  }
  await db.close();
  await database.drop();
}
console.log(table(['variant', 'result'], rows));
