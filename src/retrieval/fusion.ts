/**
 * Reciprocal rank fusion (Cormack et al., 2009): each ranking adds 1/(K + rank) for an item. It needs
 * no score calibration between BM25 and cosine, which have unrelated scales; K = 60 is the paper's value.
 */
const K = 60;

export function reciprocalRankFusion(
  rankings: ReadonlyArray<ReadonlyArray<{ chunkId: string }>>,
): Array<{ chunkId: string; score: number }> {
  const scores = new Map<string, number>();
  for (const ranking of rankings) {
    ranking.forEach((item, rank) => {
      scores.set(item.chunkId, (scores.get(item.chunkId) ?? 0) + 1 / (K + rank + 1));
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
  return Math.min(1, (score * (K + 1)) / 2);
}
