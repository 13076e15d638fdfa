import { type Embedder, reciprocalRankFusion } from '../retrieval/index.js';
import { type Analysis, analyze, bm25Idf, bm25TermWeight, queryTerms } from '../text/index.js';

export interface Candidate {
  /** Index of the page (search result) it comes from. */
  page: number;
  text: string;
  /** A search snippet standing in for a page that could not be read. */
  fallback: boolean;
}

export interface RankedPassage extends Candidate {
  score: number;
}

/** Passage length aimed at: a paragraph or two, enough context for a claim, small enough to cite. */
const PASSAGE_CHARS = 700;
/** Passages kept per page before ranking (~280 KB of text: a fact deep in a long page is still found). */
const MAX_PER_PAGE = 400;
/** Passages given to the embedder: the lexical top ones (embedding costs per passage). */
const EMBED_CANDIDATES = 24;

/** Splits page text into passages of about PASSAGE_CHARS on paragraph, then sentence, boundaries. */
export function passages(text: string, limit = MAX_PER_PAGE): string[] {
  const out: string[] = [];
  let current = '';
  const push = () => {
    const t = current.trim();
    if (t.length >= 40) out.push(t);
    current = '';
  };
  for (const para of text.split(/\n{1,}/)) {
    const pieces = para.length > PASSAGE_CHARS ? (para.match(/[^.!?]+[.!?]*\s*/g) ?? [para]) : [para];
    for (const piece of pieces) {
      if (current.length + piece.length > PASSAGE_CHARS && current) push();
      current += current && !current.endsWith(' ') ? ` ${piece}` : piece;
      if (current.length > PASSAGE_CHARS * 1.5) {
        out.push(current.slice(0, PASSAGE_CHARS).trim());
        current = current.slice(PASSAGE_CHARS);
      }
      if (out.length >= limit) return out;
    }
    if (current.length >= PASSAGE_CHARS / 2) push();
  }
  push();
  return out.slice(0, limit);
}

/**
 * Passages' words: text/'s tokeniser (accents folded, its English stop words) without stems. Stems would
 * rank better in general (Cranfield, every chunk a candidate: nDCG@10 0.356 against 0.328), but here they
 * let a search snippet standing in for an unread page outrank the page's own answer: a snippet is a fraction of
 * a passage's length, so BM25's length normalisation lifts each of its matches, and stems give it more
 * ("counts" for "count"). Weighing snippets otherwise would be the change to measure first.
 */
const PASSAGE_WORDS: Analysis = { stem: false };

/** BM25 (text/bm25.ts) of each candidate for the query, over the candidates themselves as corpus. */
function bm25(query: string, candidates: readonly string[]): number[] {
  const q = queryTerms(query, PASSAGE_WORDS);
  const wanted = new Set(q);
  const docs = candidates.map((c) => analyze(c, PASSAGE_WORDS));
  const avg = Math.max(1, docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length));
  const df = new Map<string, number>();
  for (const d of docs) for (const t of new Set(d)) if (wanted.has(t)) df.set(t, (df.get(t) ?? 0) + 1);
  const idf = new Map([...df].map(([t, n]) => [t, bm25Idf(docs.length, n)]));
  return docs.map((d) => {
    const tf = new Map<string, number>();
    for (const t of d) if (df.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
    let score = 0;
    for (const t of q) {
      const f = tf.get(t);
      if (f) score += (idf.get(t) ?? 0) * bm25TermWeight(f, d.length, avg);
    }
    return score;
  });
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i] ?? 0) * (b[i] ?? 0);
  return dot;
}

/**
 * Candidates best first: BM25 alone, or with an embedder BM25 and cosine similarity fused by reciprocal
 * rank (as document retrieval does, src/retrieval/fusion.ts). Candidates with no query term and no embedding
 * signal score 0 and come last. The score returned is BM25 (lexical) or the fused score (hybrid).
 */
export async function rank(
  query: string,
  candidates: readonly Candidate[],
  embedder: Embedder | undefined,
  signal?: AbortSignal,
): Promise<RankedPassage[]> {
  const lexical = bm25(
    query,
    candidates.map((c) => c.text),
  );
  const byLexical = candidates
    .map((c, i) => ({ ...c, score: lexical[i] ?? 0, id: String(i) }))
    .sort((a, b) => b.score - a.score);
  if (!embedder || candidates.length === 0) return byLexical.map(({ id: _id, ...rest }) => rest);
  const pool = byLexical.slice(0, EMBED_CANDIDATES);
  let vectors: Array<Float32Array | undefined>;
  try {
    vectors = await embedder.embed([query, ...pool.map((c) => c.text)], signal);
  } catch {
    return byLexical.map(({ id: _id, ...rest }) => rest);
  }
  const [q, ...rest] = vectors;
  if (!q) return byLexical.map(({ id: _id, ...r }) => r);
  // Each ranking holds only what it found something in: a passage with no query word has no lexical rank.
  const semantic = pool
    .map((c, i) => {
      const vector = rest[i];
      return { chunkId: c.id, sim: vector ? cosine(q, vector) : 0 };
    })
    .filter((c) => c.sim > 0)
    .sort((a, b) => b.sim - a.sim);
  const fused = new Map(
    reciprocalRankFusion([pool.filter((c) => c.score > 0).map((c) => ({ chunkId: c.id })), semantic]).map((f) => [
      f.chunkId,
      f.score,
    ]),
  );
  const ranked = pool.map(({ id, ...c }) => ({ ...c, score: fused.get(id) ?? 0 })).sort((a, b) => b.score - a.score);
  const rest2 = byLexical.slice(EMBED_CANDIDATES).map(({ id: _id, ...c }) => ({ ...c, score: 0 }));
  return [...ranked, ...rest2];
}
