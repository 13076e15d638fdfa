/**
 * Retrieval latency at 1k, 10k and 100k chunks for one user. The corpus is synthetic in size only:
 * Cranfield's chunk texts repeated (so term statistics stay those of real prose), in documents of 50
 * chunks, each chunk with a random unit vector (seeded); the queries are Cranfield's, with their real
 * vectors. Timed: `index.search()` alone (the query is embedded beforehand; its time is reported apart).
 */
import { performance } from 'node:perf_hooks';
import type { Chunk, ChunkIndex, SearchMode, Tenant } from '../../src/retrieval/index.js';
import type { Corpus } from './corpus.js';
import { percentile } from './metrics.js';

export const SIZES = [1_000, 10_000, 100_000] as const;
const CHUNKS_PER_DOC = 50;
const K = 10;

export interface LatencyRow {
  backend: string;
  chunks: number;
  mode: SearchMode;
  p50: number;
  p95: number;
  /** Queries timed (fewer than asked when the time budget ran out). */
  n: number;
}

/** Per (backend, size, mode): at most this long timing, once MIN_SAMPLES are in (a slow scan at 100k). */
const BUDGET_MS = 20_000;
const MIN_SAMPLES = 30;

/** A seeded generator (mulberry32), so every run and backend gets the same vectors. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomUnitVector(next: () => number, dimension: number): Float32Array {
  const v = new Float32Array(dimension);
  let norm = 0;
  for (let i = 0; i < dimension; i++) {
    // Box–Muller: a Gaussian per component makes the direction uniform on the sphere
    const g = Math.sqrt(-2 * Math.log(next() || 1e-12)) * Math.cos(2 * Math.PI * next());
    v[i] = g;
    norm += g * g;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < dimension; i++) v[i] = (v[i] ?? 0) / norm;
  return v;
}

/** Grows the tenant's synthetic corpus from `from` to `to` chunks (whole documents of 50). */
export async function grow(index: ChunkIndex, tenant: Tenant, corpus: Corpus, from: number, to: number) {
  const next = random(from + 1);
  const dimension = corpus.chunkVectors.values().next().value?.length ?? 384;
  for (let start = from; start < to; start += CHUNKS_PER_DOC) {
    const documentId = `syn${start / CHUNKS_PER_DOC}`;
    const chunks: Chunk[] = [];
    for (let i = start; i < Math.min(to, start + CHUNKS_PER_DOC); i++) {
      const source = corpus.chunks[i % corpus.chunks.length] as Chunk;
      chunks.push({ ...source, id: `${documentId}_c${i - start}`, documentId, ordinal: i - start });
    }
    await index.putChunks(tenant, documentId, chunks);
    await index.putVectors(
      tenant,
      documentId,
      chunks.map((c) => ({ chunkId: c.id, vector: randomUnitVector(next, dimension) })),
    );
  }
}

export async function timeSearches(
  backend: string,
  index: ChunkIndex,
  tenant: Tenant,
  corpus: Corpus,
  chunks: number,
  modes: readonly SearchMode[],
  queries: number,
): Promise<LatencyRow[]> {
  const rows: LatencyRow[] = [];
  const qs = corpus.queries.slice(0, queries);
  for (const mode of modes) {
    // warm-up: the first queries pay for caches and JIT
    for (const q of qs.slice(0, 5)) {
      await index.search(tenant, { text: q.text, vector: corpus.queryVectors.get(q.id), k: K, mode });
    }
    const samples: number[] = [];
    const deadline = performance.now() + BUDGET_MS;
    for (const q of qs) {
      if (samples.length >= MIN_SAMPLES && performance.now() > deadline) break;
      const vector = corpus.queryVectors.get(q.id);
      const started = performance.now();
      await index.search(tenant, { text: q.text, vector, k: K, mode });
      samples.push(performance.now() - started);
    }
    rows.push({
      backend,
      chunks,
      mode,
      p50: percentile(samples, 0.5),
      p95: percentile(samples, 0.95),
      n: samples.length,
    });
  }
  return rows;
}
