import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BM25, bm25Idf, bm25TermWeight } from '../../src/text/index.js';

/** BM25's term weight as the textbooks write it. */
const textbook = (tf: number, length: number, avg: number) =>
  (tf * (BM25.k1 + 1)) / (tf + BM25.k1 * (1 - BM25.b + (BM25.b * length) / avg));

describe('BM25', () => {
  it('has its constants once: k1 1.2, b 0.75, frozen', () => {
    assert.deepEqual({ ...BM25 }, { k1: 1.2, b: 0.75 });
    assert.ok(Object.isFrozen(BM25));
  });

  it("uses Lucene's IDF, which never goes negative", () => {
    assert.equal(bm25Idf(10, 1), Math.log(1 + 9.5 / 1.5));
    assert.ok(bm25Idf(10, 10) > 0, 'a term in every text still counts a little');
    assert.ok(bm25Idf(1000, 1) > bm25Idf(1000, 10));
  });

  it('weighs a term as the textbook formula does, saturating with frequency and normalised by length', () => {
    for (const [tf, length, avg] of [
      [1, 50, 50],
      [3, 20, 49.3],
      [7, 400, 50],
      [1, 1, 1],
    ] as const) {
      assert.ok(Math.abs(bm25TermWeight(tf, length, avg) - textbook(tf, length, avg)) < 1e-12, `${tf} ${length}`);
    }
    assert.equal(bm25TermWeight(1, 50, 50), 1, 'one occurrence in a text of average length weighs 1');
    assert.ok(bm25TermWeight(1000, 50, 50) < BM25.k1 + 1, 'never above k1 + 1');
    assert.ok(bm25TermWeight(2, 50, 50) > bm25TermWeight(1, 50, 50));
    assert.ok(bm25TermWeight(1, 25, 50) > bm25TermWeight(1, 100, 50), 'a shorter text weighs a match more');
  });

  it("gives Qdrant's stored weights (4 decimals) exactly as the textbook formula does", () => {
    for (let length = 1; length <= 400; length++) {
      for (let tf = 1; tf <= length; tf++) {
        const stored = Math.round(bm25TermWeight(tf, length, 50) * 1e4);
        assert.equal(stored, Math.round(textbook(tf, length, 50) * 1e4), `tf ${tf}, length ${length}`);
      }
    }
  });
});
