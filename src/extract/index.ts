/**
 * Text out of a file's bytes (plain text, Markdown, HTML, PDF, DOCX), parsed in worker threads under limits of time and
 * memory. Documents (`documents/`) extract uploads with it and web grounding (`web/`) extracts fetched pages.
 */

export { Extractor } from './extractor.js';
export {
  detectFormat,
  looksLikeText,
  NOT_CONTENT_ELEMENTS,
} from './formats.js';
