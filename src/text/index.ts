/**
 * Text analysis shared by retrieval (rag/, memory/) and the storage migrations that back-fill what it
 * produces: one analysis, so a stored term and a query's term are always made the same way.
 */
export { analyze, encodeTerms, queryTerms } from './lexical-terms.js';
