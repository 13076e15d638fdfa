import { analyze } from '../../text/index.js';
import type { Citation } from './source.js';

/** A sentence of an answer and the source that supports it best. */
export interface SupportedSentence {
  /** The sentence's span in the answer (UTF-16 code units, end exclusive), its surrounding white space left out. */
  start: number;
  end: number;
  citation: Citation;
}

/**
 * A source supports a sentence when it holds at least two of the sentence's words and at least half of them:
 * one shared word ("walrus") is what every source on the question shares, and a sentence mostly made of words
 * no source has is the model's own.
 */
const MIN_SHARED_TERMS = 2;
const MIN_COVERAGE = 0.5;

const sentenceSegmenter = new Intl.Segmenter('en', { granularity: 'sentence' });

/**
 * The sentences of an answer that one of its sources supports, each with the source that supports it best, in
 * the order of the text: how an answer that writes no `[n]` is still attributed. Words are compared as
 * retrieval analyses them (stems, no stop words); a word weighs more the fewer sources have it, so a sentence
 * goes to the source that has what sets it apart, and a tie to the source ranked first.
 */
export function supportedSentences(answer: string, citations: readonly Citation[]): SupportedSentence[] {
  if (citations.length === 0 || answer.trim() === '') return [];
  const sources = citations.map((c) => new Set(analyze(`${c.title}\n${c.snippet}`)));
  const weightOf = termWeights(sources);
  const found: SupportedSentence[] = [];
  for (const { segment, index } of sentenceSegmenter.segment(answer)) {
    const terms = [...new Set(analyze(segment))];
    if (terms.length < MIN_SHARED_TERMS) continue;
    let best: { citation: Citation; score: number } | undefined;
    for (const [i, source] of sources.entries()) {
      const shared = terms.filter((t) => source.has(t));
      if (shared.length < MIN_SHARED_TERMS || shared.length / terms.length < MIN_COVERAGE) continue;
      const score = shared.reduce((sum, t) => sum + weightOf(t), 0);
      if (!best || score > best.score) best = { citation: citations[i] as Citation, score };
    }
    if (!best) continue;
    const start = index + (segment.length - segment.trimStart().length);
    found.push({ start, end: index + segment.trimEnd().length, citation: best.citation });
  }
  return found;
}

/** ln(1 + N / df): a word every source has weighs least. */
function termWeights(sources: readonly ReadonlySet<string>[]): (term: string) => number {
  const df = new Map<string, number>();
  for (const source of sources) for (const t of source) df.set(t, (df.get(t) ?? 0) + 1);
  return (term) => Math.log(1 + sources.length / (df.get(term) ?? 1));
}
