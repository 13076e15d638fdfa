/** Ranking quality: nDCG@k with graded gains and recall@k, averaged over the judged queries. */
import type { Qrels } from './cranfield.js';

/**
 * nDCG@k (Järvelin & Kekäläinen), with the linear gain of the judgement and a log2(rank + 1) discount:
 * DCG = Σ gain(d_i) / log2(i + 1) over ranks i = 1..k, divided by the DCG of the ideal ordering of all
 * the query's judged documents. A document ranked twice counts once (its first rank).
 */
export function ndcgAt(ranked: readonly string[], judged: ReadonlyMap<string, number>, k: number): number {
  const seen = new Set<string>();
  let dcg = 0;
  let rank = 0;
  for (const id of ranked) {
    if (seen.has(id)) continue;
    seen.add(id);
    rank++;
    if (rank > k) break;
    dcg += (judged.get(id) ?? 0) / Math.log2(rank + 1);
  }
  const ideal = [...judged.values()].sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((sum, gain, i) => sum + gain / Math.log2(i + 2), 0);
  return idcg > 0 ? dcg / idcg : 0;
}

/** Share of the query's relevant (gain > 0) documents among the first k distinct ones. */
export function recallAt(ranked: readonly string[], judged: ReadonlyMap<string, number>, k: number): number {
  const relevant = [...judged].filter(([, g]) => g > 0).length;
  if (relevant === 0) return 0;
  const top = new Set<string>();
  for (const id of ranked) {
    if (top.size >= k) break;
    top.add(id);
  }
  let found = 0;
  for (const id of top) if ((judged.get(id) ?? 0) > 0) found++;
  return found / relevant;
}

/**
 * Chunk hits → documents, best first: a document scores its best chunk's score (max-pooling). The hits
 * arrive best first, so a document's first appearance is its best chunk.
 */
export function documentsOf(hits: ReadonlyArray<{ documentId: string }>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const h of hits) {
    if (seen.has(h.documentId)) continue;
    seen.add(h.documentId);
    out.push(h.documentId);
  }
  return out;
}

export interface Quality {
  ndcg10: number;
  recall100: number;
  queries: number;
}

/** Mean nDCG@10 and recall@100 over the queries that have at least one relevant document. */
export function evaluate(runs: ReadonlyMap<string, readonly string[]>, qrels: Qrels): Quality {
  let ndcg = 0;
  let recall = 0;
  let n = 0;
  for (const [query, judged] of qrels) {
    if (judged.size === 0) continue;
    const ranked = runs.get(query) ?? [];
    ndcg += ndcgAt(ranked, judged, 10);
    recall += recallAt(ranked, judged, 100);
    n++;
  }
  return { ndcg10: n ? ndcg / n : 0, recall100: n ? recall / n : 0, queries: n };
}

export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}
