import { type Extractor, NOT_CONTENT_ELEMENTS } from '../extract/index.js';
import type { FetchedPage } from './fetcher.js';

export interface PageText {
  text: string;
  title?: string;
}

/**
 * Readability (on a linkedom DOM) picks a page's article best, but costs ~2 ms per KB of markup on this
 * machine class (a 285 KB page: ~130 ms to parse, ~500 ms to score): five such pages would eat the
 * whole web budget on the event loop. So every page is first stripped by a linear pass (below); pages
 * whose stripped markup is under READABILITY_MAX_CHARS then go through Readability, larger ones keep the
 * stripped text, whose boilerplate the passage ranking leaves out anyway (a menu matches no question).
 */
const READABILITY_MAX_CHARS = 48 * 1024;

const NOT_CONTENT = new Set(NOT_CONTENT_ELEMENTS);
/** Elements that break text into lines (the rest are inline). */
const BLOCK = new Set(
  'p div br li ul ol h1 h2 h3 h4 h5 h6 tr td th table thead tbody section article main blockquote pre dd dt dl figure figcaption hr details summary caption'.split(
    ' ',
  ),
);
const TAG_NAME = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)/y;
const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  mdash: '—',
  ndash: '–',
  hellip: '…',
  rsquo: '’',
  lsquo: '‘',
  rdquo: '”',
  ldquo: '“',
  copy: '©',
};

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,8}|#\d{1,8}|[a-z]{1,32});/gi, (whole, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1));
      return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : ' ';
    }
    return NAMED[e.toLowerCase()] ?? whole;
  });
}

/**
 * The markup without comments, non-content elements and attributes, and its text, in one linear pass
 * (indexOf scans, no backtracking regular expression: a hostile page of a million unclosed `<a` or
 * `<!--` must cost a scan, not a square). Whatever follows an unclosed tag, comment or non-content
 * element is dropped.
 */
export function stripMarkup(
  source: string,
  maxHtml = Number.POSITIVE_INFINITY,
): { html: string | undefined; text: string; title?: string } {
  // ASCII-only lower case keeps every index the same as in `source` (toLowerCase may change lengths).
  let lower = source.toLowerCase();
  if (lower.length !== source.length) lower = source.replace(/[A-Z]+/g, (m) => m.toLowerCase());
  // The stripped markup is kept only while it may still go to Readability (under maxHtml characters).
  let html: string[] | undefined = [];
  let htmlSize = 0;
  const keep = (piece: string) => {
    if (!html) return;
    htmlSize += piece.length;
    if (htmlSize > maxHtml) html = undefined;
    else html.push(piece);
  };
  const text: string[] = [];
  let title: string | undefined;
  const t = lower.indexOf('<title');
  if (t >= 0) {
    const start = source.indexOf('>', t);
    const end = start < 0 ? -1 : lower.indexOf('</title', start);
    if (end > start) title = source.slice(start + 1, Math.min(end, start + 1 + 2000));
  }
  let i = 0;
  const n = source.length;
  while (i < n) {
    const lt = source.indexOf('<', i);
    if (lt < 0) {
      keep(source.slice(i));
      text.push(source.slice(i));
      break;
    }
    if (lt > i) {
      const piece = source.slice(i, lt);
      keep(piece);
      text.push(piece);
    }
    if (source.startsWith('<!--', lt)) {
      const end = source.indexOf('-->', lt + 4);
      if (end < 0) break;
      i = end + 3;
      continue;
    }
    const gt = source.indexOf('>', lt + 1);
    if (gt < 0) break;
    i = gt + 1;
    TAG_NAME.lastIndex = lt;
    const m = TAG_NAME.exec(source);
    if (!m || m.index !== lt) continue; // <!doctype>, <?xml?>, a stray "<": dropped
    const closing = m[1] === '/';
    const name = (m[2] as string).toLowerCase();
    if (!closing && NOT_CONTENT.has(name) && source[gt - 1] !== '/') {
      const close = lower.indexOf(`</${name}`, i);
      if (close < 0) break;
      const after = source.indexOf('>', close);
      if (after < 0) break;
      i = after + 1;
      keep(' ');
      text.push(' ');
      continue;
    }
    if (NOT_CONTENT.has(name)) continue; // a stray closing tag
    keep(closing ? `</${name}>` : `<${name}>`);
    if (BLOCK.has(name)) text.push('\n');
  }
  const clean = title ? decodeEntities(title.replace(/<[^>]{0,200}>/g, '')).trim() : '';
  const markup = html?.join('');
  return { html: markup, text: decodeEntities(text.join('')), ...(clean ? { title: clean } : {}) };
}

/**
 * The page's charset (header, then `<meta charset>` in its first bytes), else UTF-8. Decoding never
 * throws: broken bytes become U+FFFD, and the rest of the page is still read.
 */
export function decodePage(body: Buffer, declared?: string): string {
  let label = declared;
  if (!label) {
    const head = body.subarray(0, 4096).toString('latin1');
    label = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1];
  }
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) label = 'utf-8';
  try {
    return new TextDecoder(label ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

function normalise(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/\uFFFD+/g, ' ')
    .replace(/[ \t\f\v\u00a0]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export async function htmlText(source: string): Promise<PageText> {
  const { html, text: stripped, title } = stripMarkup(source, READABILITY_MAX_CHARS);
  let text = stripped;
  if (html !== undefined) {
    const { parseHTML } = await import('linkedom');
    const { Readability } = await import('@mozilla/readability');
    // linkedom builds a DOM and runs nothing (and scripts are gone already).
    const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
    try {
      const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
      const readable = article?.textContent ?? '';
      // Readability drops short pages it does not take for articles; the stripped text then stays.
      if (readable.trim().length >= stripped.trim().length / 3) text = readable;
    } catch {
      // the stripped text stays
    }
  }
  return { text: normalise(text), ...(title ? { title } : {}) };
}

/** A fetched page's readable text; PDFs go to the documents' extraction worker (off the event loop). */
export async function pageText(page: Extract<FetchedPage, { ok: true }>, pdf?: Extractor): Promise<PageText> {
  if (page.kind === 'html') return htmlText(decodePage(page.body, page.charset));
  if (page.kind === 'text') return { text: normalise(decodePage(page.body, page.charset)) };
  if (!pdf || page.truncated) return { text: '' };
  const extracted = await pdf.extract(new Uint8Array(page.body), 'application/pdf');
  return { text: normalise(extracted.text) };
}
