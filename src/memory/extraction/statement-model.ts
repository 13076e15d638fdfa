import { HASH_DIMS, type SparseFeatures } from './features.js';
import { STATEMENT_CLASSES, type StatementClass } from './kinds.js';

/** A layer as stored: int8 weights, one base64 string per output row, with each row's scale, and the biases. */
interface StoredLayer {
  inputs: number;
  outputs: number;
  bias: readonly number[];
  scales: readonly number[];
  weights: readonly string[];
}

/**
 * One trained head of the statement model, as `scripts/memory/train-statement-model.ts` writes it into
 * `statement-model.json`: over [the statement's embedding (when `embedder` is set), its hashed word
 * features], either one layer (a softmax regression) or a hidden ReLU layer and then the softmax.
 */
export interface StoredHead {
  /** The embedder whose vectors the head was trained on (its `Embedder.id`); absent: words only. */
  embedder?: string;
  /** Embedding dimensions the head reads (0 for words only). */
  dimension: number;
  hashDims: number;
  classes: readonly string[];
  layers: readonly StoredLayer[];
  /** A statement is a fact when P(none) is below this (chosen on the training set's held-out folds). */
  noneThreshold: number;
  /** What the training's held-out folds scored at that threshold (statements, not turns). */
  heldOut?: { recall: number; falseFacts: number; kindAccuracy: number };
}

export interface StatementVerdict {
  kind: StatementClass;
  /** The probability that the statement states no lasting fact. */
  pNone: number;
  fact: boolean;
}

interface Layer {
  inputs: number;
  outputs: number;
  bias: Float32Array;
  weights: Float32Array;
}

function load(stored: StoredLayer): Layer {
  const weights = new Float32Array(stored.outputs * stored.inputs);
  for (let o = 0; o < stored.outputs; o++) {
    const raw = new Int8Array(Buffer.from(stored.weights[o] ?? '', 'base64'));
    if (raw.length !== stored.inputs)
      throw new Error(`the statement model's row ${o} holds ${raw.length} weights, not ${stored.inputs}`);
    const scale = stored.scales[o] ?? 0;
    for (let i = 0; i < stored.inputs; i++) weights[o * stored.inputs + i] = (raw[i] ?? 0) * scale;
  }
  return { inputs: stored.inputs, outputs: stored.outputs, bias: Float32Array.from(stored.bias), weights };
}

/**
 * The statement model at run time: ~30 µs a statement (the first layer reads the embedding's 384 values and
 * the ~30 hashed word features that are set, for each of its outputs).
 */
export class StatementModel {
  readonly embedder: string | undefined;
  readonly #dimension: number;
  readonly #layers: Layer[];
  readonly #threshold: number;

  constructor(head: StoredHead) {
    if (head.hashDims !== HASH_DIMS || head.classes.join() !== STATEMENT_CLASSES.join()) {
      throw new Error('the statement model was trained with other features or classes: run npm run train:memory');
    }
    this.embedder = head.embedder;
    this.#dimension = head.dimension;
    this.#layers = head.layers.map(load);
    this.#threshold = head.noneThreshold;
  }

  /** Whether this head reads vectors of `embedderId`; a words-only head reads none. */
  reads(embedderId: string | undefined): boolean {
    return this.embedder === undefined || this.embedder === embedderId;
  }

  judge(words: SparseFeatures, vector: Float32Array | undefined): StatementVerdict {
    const p = this.probabilities(words, vector);
    let best = 1;
    for (let c = 2; c < p.length; c++) if ((p[c] ?? 0) > (p[best] ?? 0)) best = c;
    const pNone = p[0] ?? 1;
    return { kind: STATEMENT_CLASSES[best] as StatementClass, pNone, fact: pNone < this.#threshold };
  }

  probabilities(words: SparseFeatures, vector: Float32Array | undefined): Float64Array {
    const [first, ...rest] = this.#layers as [Layer, ...Layer[]];
    const dimension = this.#dimension;
    let out = new Float64Array(first.outputs);
    for (let o = 0; o < first.outputs; o++) {
      const row = o * first.inputs;
      let sum = first.bias[o] ?? 0;
      if (dimension > 0 && vector)
        for (let j = 0; j < dimension; j++) sum += (first.weights[row + j] ?? 0) * (vector[j] ?? 0);
      for (const index of words.indices) sum += (first.weights[row + dimension + index] ?? 0) * words.value;
      out[o] = sum;
    }
    for (const layer of rest) {
      const input = out.map((v) => Math.max(v, 0));
      out = new Float64Array(layer.outputs);
      for (let o = 0; o < layer.outputs; o++) {
        let sum = layer.bias[o] ?? 0;
        for (let i = 0; i < layer.inputs; i++) sum += (layer.weights[o * layer.inputs + i] ?? 0) * (input[i] ?? 0);
        out[o] = sum;
      }
    }
    return softmax(out);
  }
}

export function softmax(logits: Float64Array): Float64Array {
  let max = Number.NEGATIVE_INFINITY;
  for (const v of logits) if (v > max) max = v;
  let total = 0;
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) {
    out[i] = Math.exp((logits[i] ?? 0) - max);
    total += out[i] ?? 0;
  }
  for (let i = 0; i < out.length; i++) out[i] = (out[i] ?? 0) / total;
  return out;
}
