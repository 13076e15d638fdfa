import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Citation, supportedSentences } from '../../src/chat/index.js';

const web = (index: number, title: string, snippet: string): Citation => ({
  index,
  source: 'web',
  title,
  snippet,
  score: 1,
  url: `https://example.org/${index}`,
});

/** The attribution of an answer's sentences to its sources, on the edges the HTTP suites do not reach. */
describe('supportedSentences', () => {
  const census = web(1, 'Walrus census', 'The 2026 walrus census of Svalbard counted 5,503 walruses on the ice.');
  const diet = web(2, 'Walrus diet', 'A walrus eats up to 4,000 clams in one feeding, mostly at night.');

  const spans = (answer: string, citations: Citation[]) =>
    supportedSentences(answer, citations).map((s) => [answer.slice(s.start, s.end), s.citation.index]);

  it('a sentence goes to the source that has what sets it apart, not the word every source shares', () => {
    const answer = '  Walruses eat up to 4,000 clams at night.\n\nThe census counted 5,503 walruses in 2026.  ';
    assert.deepEqual(spans(answer, [census, diet]), [
      ['Walruses eat up to 4,000 clams at night.', 2],
      ['The census counted 5,503 walruses in 2026.', 1],
    ]);
  });

  it('a decimal point or a thousands separator does not end a sentence', () => {
    const ice = web(1, 'Ice', 'Sea ice covered 3.5 percent less of the fjords, about 1,200 square kilometres.');
    const answer = 'Ice covered 3.5 percent less, about 1,200 square kilometres. Thanks!';
    assert.deepEqual(spans(answer, [ice]), [['Ice covered 3.5 percent less, about 1,200 square kilometres.', 1]]);
  });

  it('one shared word, or a sentence mostly of words no source has, is not support', () => {
    assert.deepEqual(spans('Walruses are large.', [census, diet]), []);
    assert.deepEqual(
      spans('A walrus census elsewhere depends on fishing quotas, shipping lanes, oil exploration and funding.', [
        census,
      ]),
      [],
    );
    assert.deepEqual(spans('', [census]), []);
    assert.deepEqual(spans('The census counted 5,503 walruses.', []), []);
  });

  it('a tie goes to the source ranked first', () => {
    const again = { ...census, index: 2, url: 'https://example.org/copy' };
    assert.deepEqual(spans('The census counted 5,503 walruses.', [census, again]), [
      ['The census counted 5,503 walruses.', 1],
    ]);
  });
});
