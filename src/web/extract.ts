import type { Extractor } from '../rag/index.js';
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

/** Elements whose text is never the page's: code, styles, navigation and page furniture (as in rag/extract). */
const NOT_CONTENT =
  /<(script|style|noscript|template|iframe|object|embed|svg|math|nav|header|footer|aside|form|select|button|head)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const BLOCK =
  /<\/?(?:p|div|br|li|ul|ol|h[1-6]|tr|td|th|table|thead|tbody|section|article|main|blockquote|pre|dd|dt|dl|figure|figcaption|hr|details|summary|caption)\b[^>]*>/gi;
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
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1));
      return code > 0 && code < 0x110000 ? String.fromCodePoint(code) : ' ';
    }
    return NAMED[e.toLowerCase()] ?? whole;
  });
}

/** The markup without comments, non-content elements and attributes (a linear pass, no DOM). */
export function stripMarkup(source: string): { html: string; title?: string } {
  const title = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(source)?.[1];
  const html = source
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(NOT_CONTENT, ' ')
    .replace(/<([a-z][a-z0-9]*)\b[^>]*>/gi, '<$1>');
  const clean = title ? decodeEntities(title.replace(/<[^>]*>/g, '')).trim() : '';
  return { html, ...(clean ? { title: clean } : {}) };
}

function markupText(html: string): string {
  return decodeEntities(html.replace(BLOCK, '\n').replace(/<[^>]*>/g, ''));
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
  const { html, title } = stripMarkup(source);
  const stripped = markupText(html);
  let text = stripped;
  if (html.length <= READABILITY_MAX_CHARS) {
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
