import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gainOf } from '../../bench/rag/cranfield.js';
import { documentsOf, evaluate, ndcgAt, recallAt } from '../../bench/rag/metrics.js';

const close = (actual: number, expected: number) =>
  assert.ok(Math.abs(actual - expected) < 1e-9, `${actual} is not ${expected}`);

describe('RAG benchmark metrics', () => {
  const judged = new Map([
    ['a', 4],
    ['b', 2],
    ['c', 1],
  ]);

  it('nDCG@k is 1 for the ideal ordering and discounts by log2(rank + 1)', () => {
    close(ndcgAt(['a', 'b', 'c'], judged, 10), 1);
    // ranked: x (0), a (4), c (1): DCG = 4/log2(3) + 1/log2(4); ideal: 4 + 2/log2(3) + 1/2
    const dcg = 4 / Math.log2(3) + 1 / 2;
    const idcg = 4 + 2 / Math.log2(3) + 1 / 2;
    close(ndcgAt(['x', 'a', 'c'], judged, 10), dcg / idcg);
    // at k = 2 only x and a count, against the best two gains
    close(ndcgAt(['x', 'a', 'c'], judged, 2), 4 / Math.log2(3) / (4 + 2 / Math.log2(3)));
    close(ndcgAt([], judged, 10), 0);
  });

  it('counts a document ranked twice once', () => {
    close(ndcgAt(['a', 'a', 'b', 'c'], judged, 10), 1);
  });

  it('recall@k is the share of relevant documents in the first k distinct ones', () => {
    close(recallAt(['a', 'x', 'c'], judged, 100), 2 / 3);
    close(recallAt(['a', 'x', 'c'], judged, 2), 1 / 3);
  });

  it('scores a document by its best chunk (its first hit)', () => {
    assert.deepEqual(documentsOf([{ documentId: 'b' }, { documentId: 'a' }, { documentId: 'b' }]), ['b', 'a']);
  });

  it('maps Cranfield grades 1..4 to gains 4..1 and -1 to 0', () => {
    assert.deepEqual([1, 2, 3, 4, -1].map(gainOf), [4, 3, 2, 1, 0]);
  });

  it('averages over judged queries', () => {
    const q = evaluate(
      new Map([
        ['1', ['a', 'b', 'c']],
        ['2', ['y']],
      ]),
      new Map([
        ['1', judged],
        ['2', new Map([['z', 3]])],
      ]),
    );
    close(q.ndcg10, 0.5);
    close(q.recall100, 0.5);
    assert.equal(q.queries, 2);
  });
});
