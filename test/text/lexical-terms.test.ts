import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { analyze, ENGLISH_STOP_WORDS, encodeTerms, queryTerms } from '../../src/text/index.js';

describe('the tokeniser', () => {
  it('by default is retrieval analysis, unchanged: the SQL index stores these terms and Qdrant hashes them', () => {
    // Pinned: a change here makes every stored rag_index_chunks.terms and Qdrant sparse vector stale.
    const text =
      "The ﬁnal Crème brûlée of İstanbul's STRASSE-cafés: 12 runners were running, 3.14 x42 naïvely re-analysed " +
      `${'Ab'.repeat(25)} — and not the 2nd time!`;
    assert.equal(
      encodeTerms(text),
      'final creme brule istanbul s strass cafe 12 runner run 3 14 x42 naiv re analys abababababababababababababababababababab 2nd time',
    );
    assert.deepEqual(analyze(text), encodeTerms(text).split(' '));
  });

  it('keeps repeats in order (their count is the term frequency); a query keeps each term once, at most 64', () => {
    assert.deepEqual(analyze('Heat, heated, HEATING heat'), ['heat', 'heat', 'heat', 'heat']);
    assert.deepEqual(queryTerms('what is the heat of heated layers?'), ['heat', 'layer']);
    assert.deepEqual(queryTerms('to be or not to be'), []);
    const many = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
    assert.equal(queryTerms(many).length, 64);
    assert.deepEqual(analyze(''), []);
    assert.deepEqual(analyze('— … !!'), []);
  });

  it('has one English stop-word list, dropped by default', () => {
    assert.equal(ENGLISH_STOP_WORDS.size, 124, 'the stored terms were made without exactly these');
    for (const word of ['the', 'not', 'before', 'was', 'yourselves']) assert.ok(ENGLISH_STOP_WORDS.has(word), word);
    assert.deepEqual(analyze('The cat was not before the door'), ['cat', 'door']);
  });

  it('takes its options for a consumer that compares words otherwise', () => {
    const text = 'The user is NOT living in Köln';
    assert.deepEqual(analyze(text, { stem: false }), ['user', 'living', 'koln']);
    assert.deepEqual(analyze(text, { foldAccents: false, stem: false }), ['user', 'living', 'köln']);
    assert.deepEqual(analyze(text, { stopWords: new Set(['the', 'user', 'is', 'in']) }), ['not', 'live', 'koln']);
    assert.deepEqual(analyze(text, { stopWords: new Set(), stem: false }), [
      'the',
      'user',
      'is',
      'not',
      'living',
      'in',
      'koln',
    ]);
    assert.deepEqual(queryTerms('Running runners run', { stem: false }), ['running', 'runners', 'run']);
  });

  it('compares stop words after folding and before stemming, and never stems a number', () => {
    assert.deepEqual(analyze('ÀND Thé 1969 1970s', { stopWords: new Set(['and', 'the']) }), ['1969', '1970']);
    assert.deepEqual(analyze('ÀND Thé', { foldAccents: false, stopWords: new Set(['and', 'the']) }), ['ànd', 'thé']);
  });
});
