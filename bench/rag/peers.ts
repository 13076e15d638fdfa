/**
 * The open-source JavaScript search libraries pvai is compared with, each on the same chunks (pvai's chunker
 * over title + abstract) and the same queries, with its documented BM25 defaults:
 * - MiniSearch 7 (BM25+, k1 1.2, b 0.7, δ 0.5; OR of the terms; no prefix or fuzzy). It ships no stemmer
 *   and documents `processTerm` for one: lower-case, wink's English stop words, Porter2 stemmer.
 * - Orama 3 (BM25, k 1.2, b 0.75, d 0.5; threshold 1 = any term; a query term also matches the words it
 *   is a prefix of, its default): its built-in English stemmer (`tokenizer.stemming: true`) and the English
 *   stop words of @orama/stopwords, which its docs recommend. Without them (its bare default) nDCG@10 was
 *   0.09: a query's "a" or "of" prefix-matched most of the vocabulary.
 * - wink-bm25-text-search 3 (BM25, k1 1.2, b 0.75): the wink-nlp-utils pipeline its README documents
 *   (lower-case, tokenize0, remove stop words, Porter2 stem, propagate negations).
 * Each answers chunk ids best first; the benchmark scores a document by its best chunk, as for pvai.
 */
import { create, insertMultiple, search as oramaSearch } from '@orama/orama';
import { stopwords as oramaStopWords } from '@orama/stopwords/english';
import MiniSearch from 'minisearch';
import bm25 from 'wink-bm25-text-search';
import nlp from 'wink-nlp-utils';
import type { Chunk } from '../../src/retrieval/index.js';

export interface PeerIndex {
  name: string;
  /** Chunk ids, best first. */
  search(query: string, k: number): Promise<string[]>;
}

/** Lower-case, drop wink's default English stop words, Porter2-stem: MiniSearch's `processTerm`. */
function stemmedTerm(term: string): string | null {
  const lower = term.toLowerCase();
  if (lower.length === 0 || nlp.tokens.removeWords([lower]).length === 0) return null;
  return nlp.string.stem(lower);
}

export function miniSearchPeer(chunks: readonly Chunk[]): PeerIndex {
  const index = new MiniSearch<Chunk>({ fields: ['text'], processTerm: stemmedTerm });
  index.addAll(chunks);
  return {
    name: 'MiniSearch 7.2',
    async search(query, k) {
      return index
        .search(query)
        .slice(0, k)
        .map((r) => String(r.id));
    },
  };
}

export async function oramaPeer(chunks: readonly Chunk[]): Promise<PeerIndex> {
  const db = create({
    schema: { id: 'string', text: 'string' } as const,
    components: { tokenizer: { language: 'english', stemming: true, stopWords: oramaStopWords } },
  });
  await insertMultiple(
    db,
    chunks.map((c) => ({ id: c.id, text: c.text })),
    500,
  );
  return {
    name: 'Orama 3.1',
    async search(query, k) {
      const result = await oramaSearch(db, { term: query, properties: ['text'], limit: k });
      return result.hits.map((h) => h.id);
    },
  };
}

export function winkPeer(chunks: readonly Chunk[]): PeerIndex {
  const engine = bm25();
  engine.defineConfig({ fldWeights: { text: 1 } });
  engine.definePrepTasks([
    nlp.string.lowerCase,
    nlp.string.tokenize0,
    nlp.tokens.removeWords,
    nlp.tokens.stem,
    nlp.tokens.propagateNegations,
  ] as Array<(input: never) => unknown>);
  for (const c of chunks) engine.addDoc({ text: c.text }, c.id);
  engine.consolidate();
  return {
    name: 'wink-bm25-text-search 3.1',
    async search(query, k) {
      return engine.search(query, k).map(([id]) => id);
    },
  };
}

export async function allPeers(chunks: readonly Chunk[]): Promise<PeerIndex[]> {
  return [miniSearchPeer(chunks), await oramaPeer(chunks), winkPeer(chunks)];
}
