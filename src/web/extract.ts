import type { Extractor } from '../rag/index.js';
import type { FetchedPage } from './fetcher.js';

export interface PageText {
  text: string;
  title?: string;
}

/** HTML handed to the parser: a page's article is in its first megabyte; the rest costs parse time only. */
const MAX_HTML_CHARS = 1024 * 1024;

/** Tags whose text is never the page's: code, styles, navigation and page furniture (as in rag/extract). */
const NOT_CONTENT = 'script, style, noscript, template, iframe, object, embed, svg, nav, header, footer, aside, form';

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
  const { parseHTML } = await import('linkedom');
  const { Readability } = await import('@mozilla/readability');
  // linkedom builds a DOM and runs nothing: scripts are inert text, removed below before reading.
  const { document } = parseHTML(source.length > MAX_HTML_CHARS ? source.slice(0, MAX_HTML_CHARS) : source);
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
