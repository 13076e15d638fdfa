/**
 * Text extraction from uploaded files: runs inside the extraction worker (extract-worker.ts), never on
 * the event loop. Each failure is an ExtractionFailure with the error code the API answers with.
 */
export type FailureCode = 'EMPTY_DOCUMENT' | 'DOCUMENT_UNREADABLE' | 'DOCUMENT_ENCRYPTED' | 'PAYLOAD_TOO_LARGE';

// No TypeScript-only syntax in this file (parameter properties, enums): the extraction worker may load
// it with Node's own type stripping.
export class ExtractionFailure extends Error {
  readonly code: FailureCode;
  constructor(code: FailureCode, message: string) {
    super(message);
    this.code = code;
    this.name = 'ExtractionFailure';
  }
}

export type Format = 'text/plain' | 'text/markdown' | 'text/html' | 'application/pdf' | DocxType;
type DocxType = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
export const DOCX: DocxType = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export interface Extracted {
  text: string;
  /** Where each page starts in `text` (PDF only). */
  pages: number[];
  /** A title found in the file (HTML <title>), if any. */
  title?: string;
}

/** Everything a DOCX may hold once decompressed (a zip bomb is refused before it is inflated). */
export const MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024;

/** Types a byte sniffer reports for what is text after all (an XML declaration, an SVG): the name decides. */
const TEXT_SNIFFS = new Set(['application/xml', 'image/svg+xml']);

/**
 * The format from the file's own bytes first (a PDF or zip says what it is; `sniffed` is the media type its
 * magic number declares, if any: a PNG is an image whatever its name or declared type say), then its name
 * and declared type; undefined when it is none of the five (415).
 */
export function detectFormat(
  data: Uint8Array,
  filename: string,
  declared: string,
  sniffed?: string,
): Format | undefined {
  const head = Buffer.from(data.subarray(0, 8)).toString('latin1');
  const ext = filename.toLowerCase().match(/\.([a-z0-9]+)$/)?.[1] ?? '';
  const type = declared.toLowerCase().split(';')[0]?.trim() ?? '';
  if (head.startsWith('%PDF-')) return 'application/pdf';
  if (sniffed !== undefined && !sniffed.startsWith('text/') && !TEXT_SNIFFS.has(sniffed)) {
    if (sniffed === 'application/pdf' || sniffed === DOCX) return sniffed;
    // A DOCX the sniffer saw only as a zip (its parts in an unusual order): the parser decides.
    if (sniffed === 'application/zip' && (ext === 'docx' || type === DOCX)) return DOCX;
    return undefined;
  }
  if (ext === 'pdf' || type === 'application/pdf') return 'application/pdf'; // corrupt: 400 from the parser
  if (ext === 'docx' || type === DOCX) return DOCX;
  if (head.startsWith('PK')) return undefined; // another zip (xlsx, odt, …)
  if (ext === 'html' || ext === 'htm' || type === 'text/html') return 'text/html';
  if (ext === 'md' || ext === 'markdown' || type === 'text/markdown') return 'text/markdown';
  if (ext === 'txt' || type === 'text/plain') return 'text/plain';
  return undefined;
}

/**
 * Whether the bytes are text as decodeText reads it (a UTF-16 byte-order mark, or UTF-8 without NUL in the first
 * 64 KiB): a format sniffer must not judge them, since a UTF-16LE BOM (FF FE) looks like an MP3 frame to one.
 */
export function looksLikeText(data: Uint8Array): boolean {
  if ((data[0] === 0xff && data[1] === 0xfe) || (data[0] === 0xfe && data[1] === 0xff)) return true;
  const head = data.subarray(0, 65_536);
  if (head.includes(0)) return false;
  try {
    // stream: a character cut at the 64 KiB boundary is not an error.
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: head.length < data.length });
    return true;
  } catch {
    return false;
  }
}

/** UTF-8 (with or without BOM) or UTF-16 with a BOM; binary (NUL bytes) or invalid UTF-8 is refused. */
export function decodeText(data: Uint8Array): string {
  if (data[0] === 0xff && data[1] === 0xfe) return new TextDecoder('utf-16le').decode(data.subarray(2));
  if (data[0] === 0xfe && data[1] === 0xff) return new TextDecoder('utf-16be').decode(data.subarray(2));
  if (data.includes(0)) throw new ExtractionFailure('DOCUMENT_UNREADABLE', 'The file is binary, not text');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(data);
  } catch {
    throw new ExtractionFailure('DOCUMENT_UNREADABLE', 'The file is not valid UTF-8 text');
  }
}

/**
 * The sizes a zip declares for its entries, summed from its central directory, so a DOCX that would
 * inflate past MAX_DECOMPRESSED_BYTES is refused before anything is inflated. (A zip that lies about
 * its sizes is still bounded by the worker's memory limit.)
 */
export function declaredZipSize(data: Uint8Array): number {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const min = Math.max(0, buf.length - 65_557);
  let eocd = -1;
  for (let i = buf.length - 22; i >= min; i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ExtractionFailure('DOCUMENT_UNREADABLE', 'The DOCX is not a valid zip archive');
  const entries = buf.readUInt16LE(eocd + 10);
  let offset = buf.readUInt32LE(eocd + 16);
  let total = 0;
  for (let n = 0; n < entries; n++) {
    if (offset + 46 > buf.length || buf.readUInt32LE(offset) !== 0x02014b50) {
      throw new ExtractionFailure('DOCUMENT_UNREADABLE', 'The DOCX zip directory is corrupt');
    }
    const size = buf.readUInt32LE(offset + 24);
    // 0xffffffff: a ZIP64 size, far beyond anything accepted.
    total += size === 0xffffffff ? Number.MAX_SAFE_INTEGER : size;
    offset += 46 + buf.readUInt16LE(offset + 28) + buf.readUInt16LE(offset + 30) + buf.readUInt16LE(offset + 32);
  }
  return total;
}

function normalise(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\f\v]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

async function pdf(data: Uint8Array): Promise<Extracted> {
  const { getDocumentProxy, extractText } = await import('unpdf');
  let proxy: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // No eval of embedded fonts' code, no fetching of anything.
    const options = { isEvalSupported: false, disableFontFace: true } as Parameters<typeof getDocumentProxy>[1];
    proxy = await getDocumentProxy(new Uint8Array(data), options);
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'PasswordException')
      throw new ExtractionFailure('DOCUMENT_ENCRYPTED', 'The PDF is password-protected');
    throw new ExtractionFailure('DOCUMENT_UNREADABLE', `The PDF cannot be read: ${(err as Error).message}`);
  }
  const { text: pages } = await extractText(proxy, { mergePages: false });
  const starts: number[] = [];
  let text = '';
  for (const page of pages) {
    if (text.length > 0) text += '\n\n';
    starts.push(text.length);
    text += normalise(page);
  }
  return { text, pages: starts };
}

async function docx(data: Uint8Array): Promise<Extracted> {
  if (declaredZipSize(data) > MAX_DECOMPRESSED_BYTES) {
    throw new ExtractionFailure(
      'PAYLOAD_TOO_LARGE',
      `The DOCX would decompress to more than ${MAX_DECOMPRESSED_BYTES / 1024 / 1024} MiB`,
    );
  }
  const mammoth = (await import('mammoth')).default;
  try {
    const result = await mammoth.extractRawText({ buffer: Buffer.from(data) });
    return { text: normalise(result.value), pages: [] };
  } catch (err) {
    throw new ExtractionFailure('DOCUMENT_UNREADABLE', `The DOCX cannot be read: ${(err as Error).message}`);
  }
}

/**
 * Elements whose text is never a page's: code, styles, navigation, page furniture, form controls and the head (its
 * title is read apart). One list for uploaded HTML (removed from the DOM below) and fetched pages (web/extract.ts).
 */
export const NOT_CONTENT_ELEMENTS: readonly string[] = [
  ...['script', 'style', 'noscript', 'template', 'iframe', 'object', 'embed', 'svg', 'math'],
  ...['nav', 'header', 'footer', 'aside', 'form', 'select', 'button', 'head', 'title'],
];
const NOT_CONTENT = NOT_CONTENT_ELEMENTS.join(', ');

async function html(source: string): Promise<Extracted> {
  const { parseHTML } = await import('linkedom');
  const { Readability } = await import('@mozilla/readability');
  // linkedom builds a DOM and runs nothing: scripts are inert text, removed below before reading.
  const { document } = parseHTML(source);
  const title = document.querySelector('title')?.textContent?.trim() || undefined;
  for (const node of [...document.querySelectorAll(NOT_CONTENT)]) node.remove();
  const fallback = document.body?.textContent ?? document.documentElement?.textContent ?? '';
  let text = '';
  try {
    const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
    text = article?.textContent ?? '';
  } catch {
    text = '';
  }
  // Readability drops short pages it does not take for articles; the cleaned body is then the text.
  if (text.trim().length < fallback.trim().length / 3) text = fallback;
  return { text: normalise(text), pages: [], ...(title ? { title } : {}) };
}

export async function extract(data: Uint8Array, format: Format): Promise<Extracted> {
  let result: Extracted;
  if (format === 'application/pdf') result = await pdf(data);
  else if (format === DOCX) result = await docx(data);
  else if (format === 'text/html') result = await html(decodeText(data));
  else result = { text: normalise(decodeText(data)), pages: [] };
  if (result.text.trim().length === 0) {
    throw new ExtractionFailure('EMPTY_DOCUMENT', 'The file has no extractable text');
  }
  return result;
}
