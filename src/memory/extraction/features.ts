/**
 * The word features the statement model reads beside the statement's embedding: words, word pairs, the
 * opening words, numbers and names as classes, a question mark, the length; each hashed (FNV-1a) into
 * `HASH_DIMS` buckets and weighted 1/√n, so a statement's features have unit length. The embedding carries
 * meaning ("relocated" is near "moved"); these carry the form that tells a request from a fact ("explain it
 * like I'm five", "I need …", "today").
 */
export const HASH_DIMS = 4096;

export interface SparseFeatures {
  indices: Int32Array;
  value: number;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function token(word: string): string {
  if (/^(?:19|20)\d\d$/.test(word)) return '<year>';
  if (/^\d+$/.test(word)) return '<num>';
  if (/^'\d\d$/.test(word)) return '<year>';
  return word;
}

function lengthBucket(n: number): string {
  return n <= 3 ? '1-3' : n <= 6 ? '4-6' : n <= 10 ? '7-10' : n <= 16 ? '11-16' : '17+';
}

export function lexicalFeatures(raw: string): SparseFeatures {
  const original = raw.match(/[\p{L}\p{N}']+/gu) ?? [];
  const words = original.map((w) => token(w.toLowerCase()));
  const names: string[] = [];
  original.forEach((w, i) => {
    if (i > 0 && /^\p{Lu}/u.test(w) && w !== 'I' && !/^I'/.test(w)) names.push('<name>');
  });
  const features = new Set<string>([
    `len:${lengthBucket(words.length)}`,
    `first:${words[0] ?? ''}`,
    `first2:${words.slice(0, 2).join(' ')}`,
    ...(raw.trim().endsWith('?') ? ['<question>'] : []),
    ...names,
  ]);
  const padded = ['<s>', ...words, '</s>'];
  for (let i = 0; i < padded.length; i++) {
    if (i > 0 && i < padded.length - 1) features.add(`w:${padded[i]}`);
    if (i > 0) features.add(`b:${padded[i - 1]} ${padded[i]}`);
  }
  const indices = new Int32Array([...new Set([...features].map((f) => fnv1a(f) % HASH_DIMS))]);
  return { indices, value: 1 / Math.sqrt(Math.max(1, indices.length)) };
}
