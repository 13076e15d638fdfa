import { fileTypeFromBuffer } from 'file-type';
import { AppError } from '../errors/index.js';
import type { Extractor } from '../extract/index.js';
import { detectFormat, looksLikeText } from '../extract/index.js';
import { identifierProblem, invalidText, jsonTextProblem, type Upload } from '../http/index.js';
import { TRACING, traced } from '../tracing/index.js';
import type { NewDocument } from './document-service.js';

/** The contract's DocumentUpload text fields (it allows no others). */
const FORM_FIELDS = new Set(['user_id', 'title', 'metadata']);

function field(upload: Upload, name: string, max: number, required: boolean): string | undefined {
  const value = upload.fields[name];
  if (value === undefined || value === '') {
    if (!required) return undefined;
    throw new AppError('INVALID_PARAMETER', `${name} is required`, { field: name, reason: 'is required' });
  }
  // Characters as the contract's maxLength counts them (code points, as ajv does for JSON bodies): an emoji
  // or any other character outside the BMP is one, not two UTF-16 units.
  if (value.length > max && codePoints(value) > max) {
    throw new AppError('INVALID_PARAMETER', `${name} is longer than ${max} characters`, {
      field: name,
      reason: `must be at most ${max} characters`,
    });
  }
  return value;
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function metadataOf(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new AppError('INVALID_PARAMETER', 'metadata must be a JSON object', {
      field: 'metadata',
      reason: 'must be a JSON object',
    });
  }
  const problem = jsonTextProblem(parsed, 'metadata');
  if (problem) throw invalidText(problem);
  return parsed as Record<string, unknown>;
}

/**
 * A multipart upload → the user it is for and the document to store: its fields checked as the
 * contract's multipart schema says (openapi-backend validates JSON bodies only), the format found from the
 * file's bytes and name (415 otherwise), its text extracted in a worker.
 */
export async function fromUpload(
  upload: Upload,
  extractor: Extractor,
): Promise<{ userId: string; document: NewDocument }> {
  const unknown = Object.keys(upload.fields).find((name) => !FORM_FIELDS.has(name));
  if (unknown !== undefined) {
    throw new AppError('INVALID_PARAMETER', `Unknown form field ${unknown}`, {
      field: unknown,
      reason: 'unknown field',
    });
  }
  const userId = field(upload, 'user_id', 256, true) as string;
  // The contract's identifier pattern, which openapi-backend applies to JSON bodies only.
  const badId = identifierProblem('user_id', userId);
  if (badId) throw invalidText(badId);
  const title = field(upload, 'title', 512, false);
  const metadata = metadataOf(field(upload, 'metadata', 64 * 1024, false));
  const file = upload.file;
  if (file?.field !== 'file') {
    throw new AppError('INVALID_PARAMETER', 'file is required', { field: 'file', reason: 'is required' });
  }
  return {
    userId,
    document: await fileToDocument(file.data, file.filename, file.contentType, extractor, { title, metadata }),
  };
}

/** A file's bytes → the document to store: format from its bytes and name (415 if none), text extracted. */
export async function fileToDocument(
  data: Buffer,
  filename: string,
  contentType: string,
  extractor: Extractor,
  given: { title?: string | undefined; metadata?: Record<string, unknown> | undefined } = {},
): Promise<NewDocument> {
  const file = { data, filename, contentType };
  // file-type reads the magic numbers of ~150 binary formats (images, audio, archives, executables, …); text
  // is left to the name (an XML or RTF file named .txt is text to read).
  const sniffed = looksLikeText(file.data) ? undefined : (await fileTypeFromBuffer(file.data))?.mime;
  const format = detectFormat(file.data, file.filename, file.contentType, sniffed);
  if (!format) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Supported files are txt, md, html, pdf and docx', {
      content_type: file.contentType,
      filename: file.filename,
      ...(sniffed ? { detected: sniffed } : {}),
    });
  }
  if (file.data.length === 0) throw new AppError('EMPTY_DOCUMENT', 'The file is empty');
  const extracted = await (TRACING.on
    ? traced('document extract', { 'pvai.document.format': format, 'pvai.document.bytes': file.data.length }, () =>
        extractor.extract(file.data, format),
      )
    : extractor.extract(file.data, format));
  return {
    title: withoutNul(given.title ?? extracted.title ?? file.filename),
    text: withoutNul(extracted.text),
    metadata: given.metadata,
    contentType: format,
    sizeBytes: file.data.length,
    pages: extracted.pages,
  };
}

/**
 * A file's text with each U+0000 turned into U+FFFD, one character for one so that every citation's span
 * stays where it was: PostgreSQL's text cannot hold NUL, and in a PDF's or DOCX's text layer (or a UTF-16
 * file) it is an artefact, never words. Text sent as JSON is refused at the door instead (http/text.ts).
 */
function withoutNul(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}
