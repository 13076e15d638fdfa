import { stemmer } from 'stemmer';

/**
 * The lexical analysis of chunk text and queries, the same on every SQL backend: lower case, accents
 * folded (é → e), words of letters and digits, English stop words dropped, Porter-stemmed. Stored with
 * each chunk (rag_index_chunks.terms), so changing it changes what is stored: re-index after a change.
 */

/**
 * English stop words (PostgreSQL's `english` dictionary drops the same; so does Qdrant's BM25). They
 * are ~40 % of English tokens and match nearly every chunk, so they are neither indexed nor searched.
 */
const STOP_WORDS = new Set(
  `a about above after again against all am an and any are as at be because been before being below between
  both but by can did do does doing down during each few for from further had has have having he her here hers
  herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
  once only or other our ours ourselves out over own same she should so some such than that the their theirs
  them themselves then there these they this those through to too under until up very was we were what when
  where which while who whom why will with you your yours yourself yourselves`.split(/\s+/),
);

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
export function analyze(text: string): string[] {
  const words = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu);
  const terms: string[] = [];
  if (!words) return terms;
  for (const word of words) {
    if (STOP_WORDS.has(word)) continue;
    terms.push(stemOf(word.length > MAX_WORD ? word.slice(0, MAX_WORD) : word));
  }
  return terms;
}

/** A query's distinct terms (at most 64: a pasted page is not a query). */
export function queryTerms(query: string): string[] {
  return [...new Set(analyze(query))].slice(0, 64);
}

/** A chunk's terms as stored: space-separated, repeats kept. */
export function encodeTerms(text: string): string {
  return analyze(text).join(' ');
}
