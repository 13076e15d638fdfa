/**
 * The English stop words of pvai's lexical analysis (PostgreSQL's `english` dictionary drops the same; so
 * does Qdrant's BM25). They are ~40 % of English tokens and match nearly every text, so retrieval neither
 * indexes nor searches them. The SQL index stores terms made without them (rag_index_chunks.terms):
 * changing this list changes what is stored, so re-index after a change.
 */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  `a about above after again against all am an and any are as at be because been before being below between
  both but by can did do does doing down during each few for from further had has have having he her here hers
  herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
  once only or other our ours ourselves out over own same she should so some such than that the their theirs
  them themselves then there these they this those through to too under until up very was we were what when
  where which while who whom why will with you your yours yourself yourselves`.split(/\s+/),
);
