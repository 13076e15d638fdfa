/**
 * A synthetic corpus of any size with Cranfield's statistics, for retrieval at scale (bench:rag-scale).
 * Embedding a million chunks with MiniLM is out of reach here (~845 tokens/s), and 360 copies of
 * Cranfield's 2,789 chunks would give every term posting lists of identical copies. So each synthetic
 * chunk has a source chunk of Cranfield (drawn with a seed) and:
 * - text: the source's words, position by position, each kept with probability KEEP and otherwise
 *   replaced by a word drawn from Cranfield's unigram distribution (a uniform draw from all its words),
 *   so lengths, vocabulary and term frequencies are Cranfield's and no two chunks are copies;
 * - vector: the source's real MiniLM vector plus seeded Gaussian noise of norm ~NOISE, renormalised
 *   (cosine ~0.86 with its source), so Cranfield's real query vectors have real neighbours, as in a
 *   real corpus, instead of the uniform random directions that are a worst case for any ANN.
 * Chunk i of the corpus depends only on i (a generator per document), so every backend and run sees
 * the same chunks and a second ingestion continues where the first stopped.
 */
import type { Chunk } from '../../src/retrieval/index.js';
import type { Corpus } from './corpus.js';
import { random } from './latency.js';

export const CHUNKS_PER_DOC = 50;
const KEEP = 0.5;
const NOISE = 0.6;

export interface SyntheticDocument {
  documentId: string;
  chunks: Chunk[];
  vectors: Array<{ chunkId: string; vector: Float32Array }>;
  /** UTF-8 bytes of the chunks' text. */
  bytes: number;
}

export class SyntheticCorpus {
  readonly #sources: Chunk[];
  readonly #sourceWords: string[][];
  readonly #vectors: Float32Array[];
  readonly #words: string[];

  constructor(corpus: Corpus) {
    this.#sources = corpus.chunks;
    this.#sourceWords = corpus.chunks.map((c) => c.text.split(/\s+/).filter((w) => w.length > 0));
    this.#words = this.#sourceWords.flat();
    this.#vectors = corpus.chunks.map((c) => corpus.chunkVectors.get(c.id) as Float32Array);
  }

  /** Document `d`: chunks d*50 .. d*50+49 of the synthetic corpus. */
  document(d: number): SyntheticDocument {
    const next = random(0x9e3779b9 ^ (d + 1));
    const documentId = `syn${d}`;
    const chunks: Chunk[] = [];
    const vectors: Array<{ chunkId: string; vector: Float32Array }> = [];
    let bytes = 0;
    for (let ordinal = 0; ordinal < CHUNKS_PER_DOC; ordinal++) {
      const s = Math.floor(next() * this.#sources.length);
      const words = (this.#sourceWords[s] as string[]).map((w) =>
        next() < KEEP ? w : (this.#words[Math.floor(next() * this.#words.length)] as string),
      );
      const text = words.join(' ');
      bytes += Buffer.byteLength(text);
      const id = `${documentId}_c${ordinal}`;
      chunks.push({ ...(this.#sources[s] as Chunk), id, documentId, ordinal, text });
      vectors.push({ chunkId: id, vector: near(this.#vectors[s] as Float32Array, next) });
    }
    return { documentId, chunks, vectors, bytes };
  }
}

/** `source` plus a Gaussian of norm ~NOISE (per component σ = NOISE/√dim), renormalised. */
function near(source: Float32Array, next: () => number): Float32Array {
  const dim = source.length;
  const sigma = NOISE / Math.sqrt(dim);
  const v = new Float32Array(dim);
  let norm = 0;
  for (let i = 0; i < dim; i += 2) {
    // Box–Muller: two Gaussians per pair of draws
    const r = Math.sqrt(-2 * Math.log(next() || 1e-12)) * sigma;
    const t = 2 * Math.PI * next();
    v[i] = (source[i] as number) + r * Math.cos(t);
    if (i + 1 < dim) v[i + 1] = (source[i + 1] as number) + r * Math.sin(t);
  }
  for (let i = 0; i < dim; i++) norm += (v[i] as number) ** 2;
  norm = Math.sqrt(norm);
  for (let i = 0; i < dim; i++) v[i] = (v[i] as number) / norm;
  return v;
}
