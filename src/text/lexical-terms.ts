import { stemmer } from 'stemmer';
import { ENGLISH_STOP_WORDS } from './stop-words.js';

/**
 * pvai's one tokeniser. By default it is retrieval's analysis, the same on every backend: accents folded
 * (é → e), lower case, words of letters and digits, English stop words dropped, Porter-stemmed. The SQL
 * index stores each chunk's terms made so (rag_index_chunks.terms) and Qdrant's sparse vectors hash them:
 * changing the default changes what is stored, so re-index after a change.
 *
 * A consumer that needs another analysis says so with `Analysis` rather than tokenising on its own.
 */
export interface Analysis {
  /** Fold accents and compatibility forms (é → e, ﬁ → fi; NFKD, marks dropped). Default true. */
  foldAccents?: boolean;
  /** Words dropped, compared lower-cased (and folded) before stemming. Default `ENGLISH_STOP_WORDS`. */
  stopWords?: ReadonlySet<string>;
  /** Porter stems (a number stays as written). Default true. */
  stem?: boolean;
}

/** A word: a run of letters and digits (punctuation, symbols and apostrophes split words). */
const WORD = /[\p{L}\p{N}]+/gu;

/** Longer "words" (base64, hashes) are cut: they are looked up whole, never stemmed usefully. */
const MAX_WORD = 40;

/** A word's stem, memoised: prose repeats its words, and stemming is most of the analysis' cost. */
const stems = new Map<string, string>();

function stemOf(word: string): string {
  let stem = stems.get(word);
  if (stem === undefined) {
    stem = /^\p{N}+$/u.test(word) ? word : stemmer(word);
    if (stems.size >= 200_000) stems.clear();
    stems.set(word, stem);
  }
  return stem;
}

/** The terms of a text, in order, repeats kept (their count is the term frequency). */
export function analyze(text: string, analysis: Analysis = {}): string[] {
  const stopWords = analysis.stopWords ?? ENGLISH_STOP_WORDS;
  const stem = analysis.stem ?? true;
  const folded = analysis.foldAccents === false ? text : text.normalize('NFKD').replace(/\p{M}+/gu, '');
  const words = folded.toLowerCase().match(WORD);
  const terms: string[] = [];
  if (!words) return terms;
  for (const word of words) {
    if (stopWords.has(word)) continue;
    const cut = word.length > MAX_WORD ? word.slice(0, MAX_WORD) : word;
    terms.push(stem ? stemOf(cut) : cut);
  }
  return terms;
}

/** A query's distinct terms (at most 64: a pasted page is not a query). */
export function queryTerms(query: string, analysis?: Analysis): string[] {
  return [...new Set(analyze(query, analysis))].slice(0, 64);
}

/** A chunk's terms as the SQL index stores them: the default analysis, space-separated, repeats kept. */
export function encodeTerms(text: string): string {
  return analyze(text).join(' ');
}
