/**
 * npx tsx bench/rag/tune.ts — what a retrieval engineer would try on hybrid search, measured on
 * Cranfield with the SQLite adapter's own lexical and dense rankings (deep, 200 chunks each), fused here
 * in variants: RRF k, candidate depth per side, the lexical side's weight, min-max score fusion, and
 * the query with English stop words removed before the lexical side, and whole abstracts as single chunks
 * (their vectors cached too; the first run embeds them). Prints nDCG@10 / recall@100.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChunkHit, Tenant } from '../../src/retrieval/index.js';
import { SqlChunkIndex } from '../../src/retrieval/index.js';
import { openDb } from '../../src/storage/index.js';
import { createTestDatabase } from '../../test/support/databases.js';
import { ROOT, table } from '../lib.js';
import { benchEmbedder, loadCorpus } from './corpus.js';
import { EmbeddingCache } from './embed-cache.js';
import { documentsOf, evaluate } from './metrics.js';

const DEPTH = 200;
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
const database = await createTestDatabase('sqlite');
const db = await openDb({ dataDir: database.dataDir, owner: true });
const index = new SqlChunkIndex(db);
await index.prepare({ id: embedder.id, dimension: 384 });
const byDoc = new Map<string, typeof corpus.chunks>();
for (const c of corpus.chunks) byDoc.set(c.documentId, [...(byDoc.get(c.documentId) ?? []), c]);
for (const [doc, chunks] of byDoc) {
  await index.putChunks(tenant, doc, chunks);
  await index.putVectors(
    tenant,
    doc,
    chunks.map((c) => ({ chunkId: c.id, vector: corpus.chunkVectors.get(c.id) as Float32Array })),
  );
}

/** Whole abstracts as single chunks (Cranfield's are ~1,000 characters; the chunker cuts most in two). */
const wholeEmbedder = benchEmbedder();
const cache = new EmbeddingCache(
  join(ROOT, 'data', 'bench', `embeddings-${wholeEmbedder.id.replace(/\W+/g, '_')}.json`),
);
const wholeVectors = await cache.vectors(
  wholeEmbedder,
  // Cut to 1,500 characters (~350 tokens): LocalEmbedder fails on inputs of 512 tokens and more (see the report).
  corpus.docs.map((d) => d.text.slice(0, 1500)),
  'whole documents',
);
await wholeEmbedder.close();
const wholeDb = await createTestDatabase('sqlite');
const whole = await openDb({ dataDir: wholeDb.dataDir, owner: true });
const wholeIndex = new SqlChunkIndex(whole);
await wholeIndex.prepare({ id: embedder.id, dimension: 384 });
for (const [i, d] of corpus.docs.entries()) {
  const chunk = {
    id: `${d.id}_w`,
    documentId: d.id,
    ordinal: 0,
    text: d.text,
    charStart: 0,
    charEnd: d.text.length,
    page: null,
  };
  await wholeIndex.putChunks(tenant, d.id, [chunk]);
  const vector = wholeVectors[i] as Float32Array;
  // a few Cranfield records are empty: no tokens, no vector
  if (vector.length > 0) await wholeIndex.putVectors(tenant, d.id, [{ chunkId: chunk.id, vector }]);
}

const lexical = new Map<string, ChunkHit[]>();
const wholeLexical = new Map<string, ChunkHit[]>();
const wholeDense = new Map<string, ChunkHit[]>();
const lexicalNoStop = new Map<string, ChunkHit[]>();
const dense = new Map<string, ChunkHit[]>();
for (const q of corpus.queries) {
  const vector = corpus.queryVectors.get(q.id);
  lexical.set(q.id, await index.search(tenant, { text: q.text, k: DEPTH, mode: 'lexical' }));
  lexicalNoStop.set(q.id, await index.search(tenant, { text: withoutStopWords(q.text), k: DEPTH, mode: 'lexical' }));
  dense.set(q.id, await index.search(tenant, { text: q.text, vector, k: DEPTH, mode: 'dense' }));
  wholeLexical.set(q.id, await wholeIndex.search(tenant, { text: q.text, k: DEPTH, mode: 'lexical' }));
  wholeDense.set(q.id, await wholeIndex.search(tenant, { text: q.text, vector, k: DEPTH, mode: 'dense' }));
}
await whole.close();
await wholeDb.drop();
await db.close();
await database.drop();

const docOf = new Map([
  ...corpus.chunks.map((c) => [c.id, c.documentId] as const),
  ...corpus.docs.map((d) => [`${d.id}_w`, d.id] as const),
]);
function quality(run: (qid: string) => string[]) {
  const runs = new Map(
    corpus.queries.map((q) => [q.id, documentsOf(run(q.id).map((id) => ({ documentId: docOf.get(id) ?? id })))]),
  );
  return evaluate(runs, corpus.qrels);
}

function rrf(lists: Array<{ hits: ChunkHit[]; weight: number }>, k: number, depth: number): string[] {
  const scores = new Map<string, number>();
  for (const { hits, weight } of lists) {
    hits.slice(0, depth).forEach((h, rank) => {
      scores.set(h.chunkId, (scores.get(h.chunkId) ?? 0) + weight / (k + rank + 1));
    });
  }
  return [...scores].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}

/** Convex combination of min-max normalised scores (Bruch et al. 2023), over each side's top `depth`. */
function minMax(lists: Array<{ hits: ChunkHit[]; weight: number }>, depth: number): string[] {
  const scores = new Map<string, number>();
  for (const { hits, weight } of lists) {
    const top = hits.slice(0, depth);
    const max = Math.max(...top.map((h) => h.score));
    const min = Math.min(...top.map((h) => h.score));
    for (const h of top) {
      const norm = max > min ? (h.score - min) / (max - min) : 1;
      scores.set(h.chunkId, (scores.get(h.chunkId) ?? 0) + weight * norm);
    }
  }
  return [...scores].sort((a, b) => b[1] - a[1]).map(([id]) => id);
}

const rows: Array<[string, string, string]> = [];
const add = (name: string, run: (qid: string) => string[]) => {
  const q = quality(run);
  rows.push([name, q.ndcg10.toFixed(4), q.recall100.toFixed(4)]);
};
const L = (id: string) => lexical.get(id) ?? [];
const LS = (id: string) => lexicalNoStop.get(id) ?? [];
const D = (id: string) => dense.get(id) ?? [];
add('lexical (as is)', (id) => L(id).map((h) => h.chunkId));
add('lexical, stop words removed', (id) => LS(id).map((h) => h.chunkId));
add('dense', (id) => D(id).map((h) => h.chunkId));
for (const depth of [20, 50, 100, 200]) {
  for (const k of [1, 10, 20, 60]) {
    add(
      `RRF k=${k}, depth ${depth} (current: k=60, depth 50)`.replace(
        / \(current.*/,
        k === 60 && depth === 50 ? ' (current)' : '',
      ),
      (id) =>
        rrf(
          [
            { hits: L(id), weight: 1 },
            { hits: D(id), weight: 1 },
          ],
          k,
          depth,
        ),
    );
  }
}
for (const w of [0.5, 0.75, 1.5]) {
  add(`RRF k=60 depth 50, lexical weight ${w}`, (id) =>
    rrf(
      [
        { hits: L(id), weight: w },
        { hits: D(id), weight: 1 },
      ],
      60,
      50,
    ),
  );
}
for (const [k, depth] of [
  [60, 50],
  [60, 100],
  [20, 100],
] as const) {
  add(`RRF k=${k} depth ${depth}, stop words removed (lexical)`, (id) =>
    rrf(
      [
        { hits: LS(id), weight: 1 },
        { hits: D(id), weight: 1 },
      ],
      k,
      depth,
    ),
  );
}
for (const w of [0.3, 0.4, 0.5, 0.6]) {
  for (const lex of ['as is', 'no stop words'] as const) {
    add(`min-max convex, lexical weight ${w}, depth 100, lexical ${lex}`, (id) =>
      minMax(
        [
          { hits: lex === 'as is' ? L(id) : LS(id), weight: w },
          { hits: D(id), weight: 1 - w },
        ],
        100,
      ),
    );
  }
}
const WL = (id: string) => wholeLexical.get(id) ?? [];
const WD = (id: string) => wholeDense.get(id) ?? [];
add('whole abstracts: lexical', (id) => WL(id).map((h) => h.chunkId));
add('whole abstracts: dense', (id) => WD(id).map((h) => h.chunkId));
for (const depth of [50, 100]) {
  add(`whole abstracts: RRF k=60 depth ${depth}`, (id) =>
    rrf(
      [
        { hits: WL(id), weight: 1 },
        { hits: WD(id), weight: 1 },
      ],
      60,
      depth,
    ),
  );
}
console.log(table(['variant', 'nDCG@10', 'recall@100'], rows));
