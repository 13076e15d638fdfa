import type { Chunk } from '../retrieval/index.js';

/**
 * Chunk size: all-MiniLM-L6-v2 reads at most 256 word pieces and truncates the rest, so a window of
 * ~180 tokens (≈720 characters of English at ~4 characters a token) is embedded whole, leaves room for
 * the tokenizer's variance on names and numbers, and is small enough that a cited passage is precise.
 * The overlap (≈1–2 sentences, at most ~120 characters) keeps a fact that straddles a boundary whole in
 * at least one chunk.
 */
export const CHUNK_CHARS = 720;
const OVERLAP_CHARS = 120;

/** Where a page starts in the extracted text (PDF); pages[i] is page i+1's first character. */
export type PageStarts = readonly number[];

/** Sentence and paragraph ends: the places a window may end without cutting a sentence. */
function boundaries(text: string): number[] {
  const out: number[] = [];
  const re = /\n\s*\n|[.!?。](?=\s)|\n/g;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push(m.index + m[0].length);
  out.push(text.length);
  return out;
}

/** Index of the first element of the sorted `xs` that is >= x (xs.length when none is). */
function firstAtLeast(xs: readonly number[], x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((xs[mid] ?? 0) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function pageOf(pages: PageStarts | undefined, offset: number): number | null {
  if (!pages || pages.length === 0) return null;
  return Math.max(1, firstAtLeast(pages, offset + 1));
}

/**
 * Windows of at most CHUNK_CHARS (or the document's own window) ending on a sentence or paragraph boundary when one is in the last
 * half of the window (else a whitespace, else a hard cut), each starting OVERLAP_CHARS back on a
 * boundary. Leading and trailing whitespace is trimmed off each span, so `text` is exactly
 * `source.slice(charStart, charEnd)`.
 */
export function chunkText(
  documentId: string,
  source: string,
  pages?: PageStarts,
  window: { chars: number; overlapChars: number } = { chars: CHUNK_CHARS, overlapChars: OVERLAP_CHARS },
): Chunk[] {
  const { chars: size, overlapChars: overlap } = window;
  const ends = boundaries(source);
  const chunks: Chunk[] = [];
  let start = 0;
  while (start < source.length) {
    // A chunk never crosses a page break, so its page is the page all of its text is on.
    const nextPage = pages?.[firstAtLeast(pages, start + 1)];
    const limit = Math.min(source.length, start + size, nextPage ?? Number.POSITIVE_INFINITY);
    let end = limit;
    if (limit < source.length && limit !== nextPage) {
      // Boundaries are sorted: the last one at or before the limit, if it is in the window's second half.
      const last = ends[firstAtLeast(ends, limit + 1) - 1];
      if (last !== undefined && last > start + size / 2) end = last;
      else {
        const space = source.lastIndexOf(' ', limit);
        if (space > start + size / 2) end = space;
      }
    }
    let s = start;
    let e = end;
    while (s < e && /\s/.test(source[s] ?? '')) s++;
    while (e > s && /\s/.test(source[e - 1] ?? '')) e--;
    if (e > s) {
      chunks.push({
        id: `${documentId}_c${chunks.length}`,
        documentId,
        ordinal: chunks.length,
        text: source.slice(s, e),
        charStart: s,
        charEnd: e,
        page: pageOf(pages, s),
      });
    }
    if (end >= source.length) break;
    if (end === nextPage) {
      start = end;
      continue;
    }
    // Step back by the overlap, to a boundary if there is one, but always forward.
    const back = ends[firstAtLeast(ends, end - overlap)];
    start = back !== undefined && back < end && back > start ? back : end;
  }
  return chunks;
}
