/**
 * Text out of a file's bytes (plain text, Markdown, HTML, PDF, DOCX), parsed in worker threads under limits of time and
 * memory. Documents (`rag/`) extract uploads with it and web grounding (`web/`) extracts fetched pages.
 */

export { DEFAULT_EXTRACTION_LIMITS, type ExtractionLimits, Extractor } from './extractor.js';
export { detectFormat, type Extracted, type FailureCode, type Format, looksLikeText } from './formats.js';
