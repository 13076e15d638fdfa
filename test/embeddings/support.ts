import type { LlamaEmbeddingContext, LlamaModel, Token } from 'node-llama-cpp';
import { getSharedLlama } from '../../src/providers/index.js';
import { EMBEDDING_MODEL } from '../support/documents.js';

export interface EmbeddingItem {
  object: string;
  index: number;
  embedding: number[] | string;
}

export interface EmbeddingListBody {
  object: string;
  data: EmbeddingItem[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

export interface ErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown>;
  error: { message: string; type: string; code: string; param: string | null };
}

/** OpenAI's base64 encoding read back independently of pvai's code: little-endian float32 values. */
export function fromBase64(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Float32Array.from({ length: bytes.byteLength / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

/** A float-encoded vector as the float32 values it stands for. */
export function fromFloats(values: number[]): Float32Array {
  return Float32Array.from(values);
}

export const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
};

export const norm = (a: ArrayLike<number>) => Math.sqrt(dot(a, a));

export const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => dot(a, b) / (norm(a) * norm(b));

/**
 * all-MiniLM-L6-v2 driven directly by node-llama-cpp in the test's own process: the reference for token counts
 * and for the empty text's vector, computed without any of pvai's code.
 */
export class Reference {
  #loading: Promise<{ model: LlamaModel; context: LlamaEmbeddingContext }> | undefined;

  #load() {
    this.#loading ??= (async () => {
      const model = await (await getSharedLlama()).loadModel({ modelPath: EMBEDDING_MODEL });
      return { model, context: await model.createEmbeddingContext({ threads: 1 }) };
    })();
    return this.#loading;
  }

  async tokens(text: string): Promise<number> {
    return (await this.#load()).model.tokenize(text).length;
  }

  /** The vector of the model's start and end tokens alone, normalised: the empty text's, as sentence-transformers has it. */
  async emptyText(): Promise<Float32Array> {
    const { model, context } = await this.#load();
    const special = [model.tokens.bos, model.tokens.eos].filter((t): t is Token => t !== null);
    const raw = (await context.getEmbeddingFor(special)).vector;
    const length = norm(raw);
    return Float32Array.from(raw, (v) => v / length);
  }

  async close(): Promise<void> {
    const loading = this.#loading;
    this.#loading = undefined;
    if (!loading) return;
    const { model, context } = await loading;
    await context.dispose();
    await model.dispose();
  }
}
