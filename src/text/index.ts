/**
 * Lexical analysis, owned here for every consumer: one tokeniser (retrieval's analysis by default; other
 * analyses as its options), one English stop-word list and one BM25. Used by the SQL index and the storage
 * migration that back-fills its terms, Qdrant's sparse vectors, web passage ranking and memory
 * reconciliation, so a stored term and a query's term are always made the same way.
 */
export { BM25, bm25Idf, bm25TermWeight } from './bm25.js';
export { type Analysis, analyze, encodeTerms, queryTerms } from './lexical-terms.js';
export { ENGLISH_STOP_WORDS } from './stop-words.js';
