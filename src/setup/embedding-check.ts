import { readFile } from 'node:fs/promises';
import { getSharedLlama } from '../providers/index.js';

/** Written by `convert-minilm.py --reference`: token ids and embeddings from a numpy forward pass. */
interface ReferenceEmbeddings {
  sentences: Array<{ text: string; tokens: number[]; embedding: number[] }>;
}

export interface EmbeddingCheck {
  ok: boolean;
  /** Lowest cosine similarity between the GGUF's embedding and the reference, over the sentences. */
  minCosine: number;
  /** Sentences whose token ids differ from the reference tokenizer's. */
  tokenMismatches: string[];
}

/** The embeddings of a float32 model and of its Q8_0 quantisation agree to ≥ 0.9997 here; 0.999 leaves room. */
export const MIN_COSINE = 0.999;

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? Number.NaN;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return dot / Math.sqrt(na * nb);
}

/**
 * Embeds the reference sentences with a GGUF through node-llama-cpp (llama.cpp's tokenizer, BERT graph
 * and pooling: what the service will run) and compares them with the independent reference.
 */
export async function checkEmbeddings(modelPath: string, referencePath: string): Promise<EmbeddingCheck> {
  const reference = JSON.parse(await readFile(referencePath, 'utf8')) as ReferenceEmbeddings;
  const llama = await getSharedLlama();
  const model = await llama.loadModel({ modelPath });
  try {
    const context = await model.createEmbeddingContext({ threads: 1 });
    let minCosine = 1;
    const tokenMismatches: string[] = [];
    for (const sentence of reference.sentences) {
      // The reference ids include [CLS] and [SEP], which llama.cpp adds when it embeds.
      const tokens = model.tokenize(sentence.text);
      if (JSON.stringify(tokens) !== JSON.stringify(sentence.tokens.slice(1, -1))) tokenMismatches.push(sentence.text);
      const { vector } = await context.getEmbeddingFor(sentence.text);
      minCosine = Math.min(minCosine, cosine(vector, sentence.embedding));
    }
    await context.dispose();
    return { ok: minCosine >= MIN_COSINE && tokenMismatches.length === 0, minCosine, tokenMismatches };
  } finally {
    await model.dispose();
  }
}
