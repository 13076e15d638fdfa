/**
 * The statement model's training: a network with one hidden layer (ReLU) over [a dense vector, sparse
 * hashed word features], softmax out, cross-entropy with L2, full-batch Adam. `hidden: 0` is a plain
 * softmax regression. Deterministic: weights start from a seeded generator.
 */
import { softmax } from '../../src/memory/index.js';

export interface Sample {
  vector?: Float32Array | undefined;
  indices: Int32Array;
  value: number;
  label: number;
  weight: number;
}

export interface Shape {
  dense: number;
  sparse: number;
  hidden: number;
  classes: number;
}

export interface Network {
  shape: Shape;
  /** hidden > 0: first layer [hidden × (dense + sparse)], its bias, then the output [classes × hidden] and its bias. */
  layers: Array<{ weights: Float64Array; bias: Float64Array; inputs: number; outputs: number }>;
}

export interface TrainSettings {
  epochs: number;
  l2: number;
  rate: number;
}

function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

export function create(shape: Shape): Network {
  const random = seeded(7);
  const inputs = shape.dense + shape.sparse;
  const layer = (ins: number, outs: number, scale: number) => ({
    weights: Float64Array.from({ length: ins * outs }, () => random() * scale),
    bias: new Float64Array(outs),
    inputs: ins,
    outputs: outs,
  });
  if (shape.hidden === 0) return { shape, layers: [layer(inputs, shape.classes, 0)] };
  return {
    shape,
    layers: [
      layer(inputs, shape.hidden, Math.sqrt(6 / 40)),
      layer(shape.hidden, shape.classes, Math.sqrt(6 / shape.hidden)),
    ],
  };
}

/** The first layer's outputs for a sample's mixed dense and sparse inputs. */
function firstLayer(net: Network, s: Sample): Float64Array {
  const { weights, bias, inputs, outputs } = net.layers[0] as Network['layers'][number];
  const out = Float64Array.from(bias);
  const dense = net.shape.dense;
  for (let o = 0; o < outputs; o++) {
    const row = o * inputs;
    let sum = out[o] ?? 0;
    if (dense > 0 && s.vector) for (let j = 0; j < dense; j++) sum += (weights[row + j] ?? 0) * (s.vector[j] ?? 0);
    for (const i of s.indices) sum += (weights[row + dense + i] ?? 0) * s.value;
    out[o] = sum;
  }
  return out;
}

function dense(layer: Network['layers'][number], input: Float64Array): Float64Array {
  const out = Float64Array.from(layer.bias);
  for (let o = 0; o < layer.outputs; o++) {
    let sum = out[o] ?? 0;
    for (let i = 0; i < layer.inputs; i++) sum += (layer.weights[o * layer.inputs + i] ?? 0) * (input[i] ?? 0);
    out[o] = sum;
  }
  return out;
}

export function predict(net: Network, s: Sample): Float64Array {
  const first = firstLayer(net, s);
  if (net.layers.length === 1) return softmax(first);
  const hidden = first.map((v) => Math.max(v, 0));
  return softmax(dense(net.layers[1] as Network['layers'][number], hidden));
}

export function train(samples: readonly Sample[], shape: Shape, settings: TrainSettings): Network {
  const net = create(shape);
  const grads = net.layers.map((l) => ({ w: new Float64Array(l.weights.length), b: new Float64Array(l.bias.length) }));
  const moments = net.layers.map((l) => ({
    mw: new Float64Array(l.weights.length),
    vw: new Float64Array(l.weights.length),
    mb: new Float64Array(l.bias.length),
    vb: new Float64Array(l.bias.length),
  }));
  const total = samples.reduce((sum, s) => sum + s.weight, 0);
  const [beta1, beta2, eps] = [0.9, 0.999, 1e-8];
  const d = shape.dense;
  for (let epoch = 1; epoch <= settings.epochs; epoch++) {
    for (const g of grads) {
      g.w.fill(0);
      g.b.fill(0);
    }
    for (const s of samples) {
      const first = firstLayer(net, s);
      const hidden = net.layers.length === 1 ? first : first.map((v) => Math.max(v, 0));
      const p =
        net.layers.length === 1 ? softmax(first) : softmax(dense(net.layers[1] as Network['layers'][number], hidden));
      const out = p.map((v, c) => ((v - (c === s.label ? 1 : 0)) * s.weight) / total);
      // Error at the first layer's outputs: the output error itself, or back through the second layer and ReLU.
      let back = out;
      if (net.layers.length === 2) {
        const second = net.layers[1] as Network['layers'][number];
        const g2 = grads[1] as (typeof grads)[number];
        back = new Float64Array(second.inputs);
        for (let c = 0; c < second.outputs; c++) {
          const e = out[c] ?? 0;
          g2.b[c] = (g2.b[c] ?? 0) + e;
          for (let h = 0; h < second.inputs; h++) {
            const at = c * second.inputs + h;
            g2.w[at] = (g2.w[at] ?? 0) + e * (hidden[h] ?? 0);
            back[h] = (back[h] ?? 0) + e * (second.weights[at] ?? 0);
          }
        }
        for (let h = 0; h < back.length; h++) if ((first[h] ?? 0) <= 0) back[h] = 0;
      }
      const first0 = net.layers[0] as Network['layers'][number];
      const g1 = grads[0] as (typeof grads)[number];
      for (let o = 0; o < first0.outputs; o++) {
        const e = back[o] ?? 0;
        if (e === 0) continue;
        g1.b[o] = (g1.b[o] ?? 0) + e;
        const row = o * first0.inputs;
        if (d > 0 && s.vector)
          for (let j = 0; j < d; j++) g1.w[row + j] = (g1.w[row + j] ?? 0) + e * (s.vector[j] ?? 0);
        for (const i of s.indices) g1.w[row + d + i] = (g1.w[row + d + i] ?? 0) + e * s.value;
      }
    }
    const c1 = 1 - beta1 ** epoch;
    const c2 = 1 - beta2 ** epoch;
    net.layers.forEach((layer, l) => {
      const g = grads[l] as (typeof grads)[number];
      const m = moments[l] as (typeof moments)[number];
      for (let i = 0; i < layer.weights.length; i++) {
        const gi = (g.w[i] ?? 0) + settings.l2 * (layer.weights[i] ?? 0);
        m.mw[i] = beta1 * (m.mw[i] ?? 0) + (1 - beta1) * gi;
        m.vw[i] = beta2 * (m.vw[i] ?? 0) + (1 - beta2) * gi * gi;
        layer.weights[i] =
          (layer.weights[i] ?? 0) - (settings.rate * ((m.mw[i] ?? 0) / c1)) / (Math.sqrt((m.vw[i] ?? 0) / c2) + eps);
      }
      for (let i = 0; i < layer.bias.length; i++) {
        const gi = g.b[i] ?? 0;
        m.mb[i] = beta1 * (m.mb[i] ?? 0) + (1 - beta1) * gi;
        m.vb[i] = beta2 * (m.vb[i] ?? 0) + (1 - beta2) * gi * gi;
        layer.bias[i] =
          (layer.bias[i] ?? 0) - (settings.rate * ((m.mb[i] ?? 0) / c1)) / (Math.sqrt((m.vb[i] ?? 0) / c2) + eps);
      }
    });
  }
  return net;
}
