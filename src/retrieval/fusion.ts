/**
 * Reciprocal rank fusion (Cormack et al., 2009): each ranking adds 1/(K + rank) for an item. It needs
 * no score calibration between BM25 and cosine, which have unrelated scales; K = 60 is the paper's value.
 * Every index fuses with these parameters: the SQL index through reciprocalRankFusion, Qdrant by its own RRF.
 */
export const RRF_K = 60;
/** Candidates each ranking of a hybrid search contributes to the fusion. */
const CANDIDATES = 50;

/** How many of each ranking a hybrid search for the `k` best fuses: never fewer than `k`. */
export function fusionCandidates(k: number): number {
  return Math.max(k, CANDIDATES);
}

export function reciprocalRankFusion(
  rankings: ReadonlyArray<ReadonlyArray<{ chunkId: string }>>,
): Array<{ chunkId: string; score: number }> {
  const scores = new Map<string, number>();
  for (const ranking of rankings) {
    ranking.forEach((item, rank) => {
      scores.set(item.chunkId, (scores.get(item.chunkId) ?? 0) + 1 / (RRF_K + rank + 1));
    });
  }
  return [...scores]
    .map(([chunkId, score]) => ({ chunkId, score }))
    .sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : 1));
}

/**
 * A fused score as a relevance from 0 to 1: 1 for a chunk first in both rankings (lexical and dense), ½ for
 * one first in one of them only. The Responses API's `file_search` reports it and thresholds on it.
 */
export function fusedRelevance(score: number): number {
  return Math.min(1, (score * (RRF_K + 1)) / 2);
}
