/**
 * BM25, the one definition every lexical scorer uses: the SQL index's inverted index
 * (retrieval/sql/lexical-set.ts), the term weights pvai sends Qdrant (retrieval/qdrant/qdrant-sparse.ts;
 * Qdrant applies the IDF) and web passage ranking (web/rank.ts).
 */

/**
 * Term-frequency saturation (k1) and length normalisation (b): Robertson's usual values, Lucene's defaults.
 * Qdrant's stored weights are made with them: changing them means re-indexing Qdrant collections.
 */
export const BM25: Readonly<{ k1: number; b: number }> = Object.freeze({ k1: 1.2, b: 0.75 });
const { k1: K1, b: B } = BM25;

/**
 * Lucene's IDF, ln(1 + (N − df + 0.5) / (df + 0.5)): never negative, so a term in most texts still counts a
 * little instead of lowering the score.
 */
export function bm25Idf(texts: number, textsWithTerm: number): number {
  return Math.log(1 + (texts - textsWithTerm + 0.5) / (textsWithTerm + 0.5));
}

/**
 * A term's weight in one text before the IDF: tf·(k1 + 1) / (tf + k1·(1 − b + b·length/averageLength)),
 * lengths in terms; a text's score is the sum over the query's terms of IDF × this. Written as
 * tf·(k1 + 1) / (tf + k1·(1 − b) + (k1·b / averageLength)·length) so that, inlined in a loop over postings,
 * no division depends on the posting (with one per posting the SQL index's search at 100k chunks took
 * 1.2–1.8× as long); the weights Qdrant stores, rounded to 4 decimals, are the same either way (checked for every tf
 * and length up to 5,000 terms).
 */
export function bm25TermWeight(tf: number, length: number, averageLength: number): number {
  return (tf * (K1 + 1)) / (tf + K1 * (1 - B) + ((K1 * B) / averageLength) * length);
}
