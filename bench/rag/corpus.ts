/** The benchmark's corpus: Cranfield chunked by pvai's chunker, with cached vectors for chunks and queries. */
import { join } from 'node:path';
import { chunkText } from '../../src/documents/index.js';
import type { Chunk } from '../../src/retrieval/index.js';
import { LocalEmbedder } from '../../src/retrieval/index.js';
import { ROOT } from '../lib.js';
import { type Cranfield, loadCranfield } from './cranfield.js';
import { EmbeddingCache } from './embed-cache.js';

export const DATASET_DIR = process.env.BENCH_CRANFIELD ?? join(ROOT, '..', 'shared', 'datasets', 'cranfield');
export const MODEL_PATH =
  process.env.BENCH_EMBEDDING_MODEL ?? join(ROOT, '..', 'shared', 'models', 'all-MiniLM-L6-v2.Q8_0.gguf');
/** Threads for every embedding in the benchmark (pvai's default; the direct comparison uses the same). */
export const THREADS = Number(process.env.BENCH_THREADS ?? 1);

export interface Corpus extends Cranfield {
  chunks: Chunk[];
  /** Chunk id → vector (unit length). */
  chunkVectors: Map<string, Float32Array>;
  /** Query id → vector. */
  queryVectors: Map<string, Float32Array>;
  /** Chunk id → title of its document. */
  titles: Map<string, string>;
}

export async function loadCorpus(embedder: LocalEmbedder): Promise<Corpus> {
  const cranfield = loadCranfield(DATASET_DIR);
  const chunks = cranfield.docs.flatMap((d) => chunkText(d.id, d.text));
  const titles = new Map(chunks.map((c) => [c.id, cranfield.docs[Number(c.documentId) - 1]?.title ?? '']));
  const cache = new EmbeddingCache(join(ROOT, 'data', 'bench', `embeddings-${embedder.id.replace(/\W+/g, '_')}.json`));
  const chunkVectors = await cache.vectors(
    embedder,
    chunks.map((c) => c.text),
    'Cranfield chunks',
  );
  const queryVectors = await cache.vectors(
    embedder,
    cranfield.queries.map((q) => q.text),
    'Cranfield queries',
  );
  return {
    ...cranfield,
    chunks,
    titles,
    chunkVectors: new Map(chunks.map((c, i) => [c.id, chunkVectors[i] as Float32Array])),
    queryVectors: new Map(cranfield.queries.map((q, i) => [q.id, queryVectors[i] as Float32Array])),
  };
}

export function benchEmbedder(): LocalEmbedder {
  return new LocalEmbedder({ modelPath: MODEL_PATH, threads: THREADS });
}
