/**
 * Embedding throughput: pvai's LocalEmbedder (what DocumentService's worker calls, in batches of 16) against
 * node-llama-cpp's LlamaEmbeddingContext driven directly on the same chunks, same model, same threads.
 * Alternating rounds (the order flips each round) so both see the same machine; tokens are the model's
 * own count of each chunk (capped at its context, as both sides cut there).
 */
import { performance } from 'node:perf_hooks';
import { getSharedLlama } from '../../src/providers/index.js';
import { LocalEmbedder } from '../../src/retrieval/index.js';
import { MODEL_PATH, THREADS } from './corpus.js';

export interface EmbeddingThroughput {
  chunks: number;
  tokens: number;
  directTokensPerSecond: number;
  pvaiTokensPerSecond: number;
  threads: number;
}

const BATCH = 16;

export async function measureEmbedding(texts: readonly string[], rounds: number): Promise<EmbeddingThroughput> {
  const llama = await getSharedLlama();
  const model = await llama.loadModel({ modelPath: MODEL_PATH });
  const context = await model.createEmbeddingContext({ threads: THREADS });
  const pvai = new LocalEmbedder({ modelPath: MODEL_PATH, threads: THREADS });
  await pvai.dimension(); // loaded before timing, as DocumentService.start() does
  try {
    const tokens = texts.reduce((sum, t) => sum + Math.min(model.tokenize(t).length, model.trainContextSize), 0);
    // warm both
    await context.getEmbeddingFor(texts[0] ?? 'warm up');
    await pvai.embed([texts[0] ?? 'warm up']);
    let directMs = 0;
    let pvaiMs = 0;
    const per = Math.ceil(texts.length / rounds);
    for (let r = 0; r < rounds; r++) {
      const slice = texts.slice(r * per, (r + 1) * per);
      const direct = async () => {
        const started = performance.now();
        for (const t of slice) await context.getEmbeddingFor(t);
        directMs += performance.now() - started;
      };
      const viaPvai = async () => {
        const started = performance.now();
        for (let i = 0; i < slice.length; i += BATCH) await pvai.embed(slice.slice(i, i + BATCH));
        pvaiMs += performance.now() - started;
      };
      if (r % 2 === 0) {
        await direct();
        await viaPvai();
      } else {
        await viaPvai();
        await direct();
      }
    }
    return {
      chunks: texts.length,
      tokens,
      directTokensPerSecond: tokens / (directMs / 1000),
      pvaiTokensPerSecond: tokens / (pvaiMs / 1000),
      threads: THREADS,
    };
  } finally {
    await context.dispose();
    await model.dispose();
    await pvai.close();
  }
}

/** Query embedding latency through pvai's embedder (the first step of every hybrid search), in ms. */
export async function queryEmbeddingTimes(embedder: LocalEmbedder, queries: readonly string[]): Promise<number[]> {
  await embedder.embed([queries[0] ?? 'warm up']);
  const out: number[] = [];
  for (const q of queries) {
    const started = performance.now();
    await embedder.embed([q]);
    out.push(performance.now() - started);
  }
  return out;
}
