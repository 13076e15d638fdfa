import type { Embedder } from '../../src/retrieval/index.js';

/** Random unit vectors, reproducible. */
export function vectors(count: number, dimension: number, seed: number): Float32Array[] {
  let a = seed;
  const rand = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  };
  return Array.from({ length: count }, () => {
    const v = Float32Array.from({ length: dimension }, rand);
    const norm = Math.hypot(...v);
    return v.map((x) => x / norm);
  });
}

/** An embedder that needs no model: texts hash to fixed vectors; only the id and dimension matter here. */
export function fakeEmbedder(id: string, dimension: number): Embedder {
  return {
    id,
    dimension: async () => dimension,
    embed: async (texts) => texts.map((_, i) => vectors(1, dimension, i + 1)[0] as Float32Array),
    close: async () => undefined,
  };
}
