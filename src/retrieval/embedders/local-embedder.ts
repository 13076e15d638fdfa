import { basename } from 'node:path';
import type { LlamaEmbeddingContext, LlamaModel } from 'node-llama-cpp';
import { getSharedLlama } from '../../providers/index.js';
import type { Embedder, EmbeddingTokenizer } from '../types.js';

export interface LocalEmbedderOptions {
  modelPath: string;
  /**
   * Threads for embedding. Explicit because llama.cpp's default takes every core. Measured on the
   * 2-core test machine under load (load average ~6): 26 chunks (17 kB) took 4.6 s with 1 thread and
   * 23.8 s with 2 (the threads wait on each other when a core is taken), so 1 is the default.
   */
  threads?: number;
}

/**
 * The most tokens of one text the model reads: node-llama-cpp refuses an input of the whole window (512 for
 * MiniLM) and the model adds its own start and end tokens, so 3 are kept free (509 for MiniLM; 510 was refused).
 */
function maxTokensPerText(model: LlamaModel): number {
  return Math.max(1, model.trainContextSize - 3);
}

/** Unit length, so the dot product is the cosine similarity (and the vector index can use it). */
export function normalise(values: readonly number[]): Float32Array {
  const out = Float32Array.from(values);
  let norm = 0;
  for (const v of out) norm += v * v;
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < out.length; i++) out[i] = (out[i] ?? 0) / norm;
  return out;
}

/**
 * node-llama-cpp with a GGUF embedding model (all-MiniLM-L6-v2 by default). Loaded on first use, so a
 * server that never ingests pays nothing. The id is the model file's name: vectors from another model
 * are refused at start (see DocumentService), never mixed.
 */
export class LocalEmbedder implements Embedder {
  readonly id: string;
  readonly #options: LocalEmbedderOptions;
  #loading: Promise<{ model: LlamaModel; context: LlamaEmbeddingContext }> | undefined;

  constructor(options: LocalEmbedderOptions) {
    this.#options = options;
    this.id = `local:${basename(options.modelPath)}`;
  }

  /** What it was made with (a background embedder runs the same model). */
  get options(): LocalEmbedderOptions {
    return { ...this.#options };
  }

  #load() {
    this.#loading ??= (async () => {
      const llama = await getSharedLlama();
      const model = await llama.loadModel({ modelPath: this.#options.modelPath });
      const context = await model.createEmbeddingContext({ threads: this.#options.threads ?? 1 });
      return { model, context };
    })().catch((err: unknown) => {
      this.#loading = undefined;
      throw err;
    });
    return this.#loading;
  }

  async dimension(): Promise<number> {
    const { model } = await this.#load();
    return model.embeddingVectorSize;
  }

  /** The model's tokenizer: what the embeddings endpoint counts, bounds and prices texts by. */
  readonly tokenizer: EmbeddingTokenizer = {
    count: async (texts) => {
      const { model } = await this.#load();
      const counts: number[] = [];
      let since = 0;
      for (const text of texts) {
        counts.push(model.tokenize(text).length);
        // Tokenizing runs on the event loop (~1 ms per 32k characters here): an 8 MiB request would hold it for
        // ~250 ms, so other requests get a turn every ~256k characters.
        since += text.length;
        if (since >= 262_144) {
          since = 0;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
      return counts;
    },
    limits: async () => {
      const { model } = await this.#load();
      return { contextTokens: model.trainContextSize, maxTokensPerText: maxTokensPerText(model) };
    },
    emptyText: async () => {
      const { context, model } = await this.#load();
      const { bos, eos } = model.tokens;
      // [CLS] [SEP] as they are: node-llama-cpp adds them only where they are missing, so nothing else is read.
      const embedding = await context.getEmbeddingFor([bos, eos].filter((t) => t !== null));
      if (embedding.vector.length === 0) throw new Error('the embedding model has no start or end token to embed');
      return normalise(embedding.vector);
    },
  };

  async embed(
    texts: readonly string[],
    signal?: AbortSignal,
    onTokens?: (tokens: number) => void,
  ): Promise<Array<Float32Array | undefined>> {
    const { context, model } = await this.#load();
    const out: Array<Float32Array | undefined> = [];
    let read = 0;
    for (const text of texts) {
      signal?.throwIfAborted();
      // Longer than the model's window: the tokens beyond it are cut (chunks are sized to fit, but a text
      // of digits and commas is ~1 token a character). The embeddings endpoint refuses such texts before.
      const tokens = model.tokenize(text).slice(0, maxTokensPerText(model));
      read += tokens.length;
      // No token (MiniLM's tokenizer drops zero-width and control characters, and whitespace): llama.cpp
      // would answer a vector of 0 dimensions, which no index takes. Such a text has no vector.
      if (tokens.length === 0) {
        out.push(undefined);
        continue;
      }
      const embedding = await context.getEmbeddingFor(tokens);
      out.push(embedding.vector.length > 0 ? normalise(embedding.vector) : undefined);
    }
    onTokens?.(read);
    return out;
  }

  async close(): Promise<void> {
    const loading = this.#loading;
    this.#loading = undefined;
    if (!loading) return;
    const { model, context } = await loading.catch(() => ({ model: undefined, context: undefined }));
    await context?.dispose();
    await model?.dispose();
  }
}
