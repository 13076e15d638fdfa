import { WASM_BASE64 } from './wasm/int8-scores.js';

/**
 * One tenant's vectors in memory: float32 rows for exact scores, and the same rows quantised to int8
 * (one scale per row) in a WebAssembly instance's memory, scored against the quantised query with
 * 128-bit SIMD (src/rag/wasm/int8-scores.wat). A search over more than a few thousand rows scores every
 * row in int8 (a quarter of the bytes of float32: the scan is memory-bound), keeps the best `rerank`
 * and orders those by the exact float32 dot product (unit vectors: the cosine). Measured in
 * docs/decisions.md with scripts/bench/vector-index.ts.
 */
export interface VectorHit {
  id: string;
  score: number;
}

/** Below this many rows the exact scan is already fast enough (and exact). */
const EXACT_BELOW = 2048;

/** The little of WebAssembly used here (the project's TypeScript libs do not declare it). */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;

interface Kernel {
  memory: WasmMemory;
  scores(data: number, scales: number, n: number, dim: number, query: number, out: number): void;
}

let compiled: object | undefined;

function kernel(): Kernel {
  compiled ??= new wasm.Module(Buffer.from(WASM_BASE64, 'base64'));
  return new wasm.Instance(compiled).exports as Kernel;
}

/** Where the regions are in the instance's memory for a capacity (16-byte aligned). */
function layout(capacity: number, stride: number) {
  const query = 0;
  const scales = stride;
  const out = scales + capacity * 4;
  const data = out + capacity * 4;
  return { query, scales, out, data, end: data + capacity * stride };
}

export class VectorSet {
  readonly dimension: number;
  /** Bytes per int8 row: the dimension rounded up to the SIMD width. */
  readonly #stride: number;
  readonly #kernel = kernel();
  #capacity = 0;
  #count = 0;
  #data = new Float32Array(0);
  #layout = layout(0, 16);
  readonly #ids: string[] = [];
  readonly #docs: string[] = [];
  readonly #rowOf = new Map<string, number>();

  constructor(dimension: number) {
    this.dimension = dimension;
    this.#stride = Math.ceil(dimension / 16) * 16;
    this.#layout = layout(0, this.#stride);
  }

  get size(): number {
    return this.#count;
  }

  /** Adds the chunk's vector, or replaces it. */
  upsert(id: string, documentId: string, vector: Float32Array): void {
    if (vector.length !== this.dimension) {
      throw new Error(`a vector of ${vector.length} dimensions in a set of ${this.dimension}`);
    }
    let row = this.#rowOf.get(id);
    if (row === undefined) {
      if (this.#count === this.#capacity) this.#grow();
      row = this.#count++;
      this.#rowOf.set(id, row);
      this.#ids[row] = id;
    }
    this.#docs[row] = documentId;
    this.#data.set(vector, row * this.dimension);
    const { buffer } = this.#kernel.memory;
    const scale = this.#quantise(vector, new Int8Array(buffer, this.#layout.data + row * this.#stride, this.#stride));
    new Float32Array(buffer, this.#layout.scales, this.#capacity)[row] = scale;
  }

  /** Removes the document's vectors (moving the last rows into the holes). */
  removeDocument(documentId: string): void {
    for (let row = this.#count - 1; row >= 0; row--) {
      if (this.#docs[row] === documentId) this.#removeRow(row);
    }
  }

  /** The `k` best rows: exact below EXACT_BELOW rows, else the int8 scan and an exact rerank of its best. */
  search(query: Float32Array, k: number, rerank = 100): VectorHit[] {
    const n = this.#count;
    if (n <= Math.max(EXACT_BELOW, rerank)) return this.exact(query, k);
    const { buffer } = this.#kernel.memory;
    const at = this.#layout;
    this.#quantise(query, new Int8Array(buffer, at.query, this.#stride));
    this.#kernel.scores(at.data, at.scales, n, this.#stride, at.query, at.out);
    const scores = new Float32Array(buffer, at.out, n);
    // The best `rerank` rows by int8 score: a min-heap whose root is the one to beat.
    const heapScores = new Float32Array(rerank);
    const heapRows = new Int32Array(rerank);
    let size = 0;
    for (let row = 0; row < n; row++) {
      const s = scores[row] as number;
      if (size < rerank) {
        let i = size++;
        while (i > 0) {
          const parent = (i - 1) >> 1;
          if ((heapScores[parent] as number) <= s) break;
          heapScores[i] = heapScores[parent] as number;
          heapRows[i] = heapRows[parent] as number;
          i = parent;
        }
        heapScores[i] = s;
        heapRows[i] = row;
      } else if (s > (heapScores[0] as number)) {
        let i = 0;
        for (;;) {
          const left = 2 * i + 1;
          if (left >= size) break;
          const right = left + 1;
          const child = right < size && (heapScores[right] as number) < (heapScores[left] as number) ? right : left;
          if ((heapScores[child] as number) >= s) break;
          heapScores[i] = heapScores[child] as number;
          heapRows[i] = heapRows[child] as number;
          i = child;
        }
        heapScores[i] = s;
        heapRows[i] = row;
      }
    }
    return this.#top(query, Array.from(heapRows.subarray(0, size)), k);
  }

  /** The `k` best rows by the exact dot product over every row. */
  exact(query: Float32Array, k: number): VectorHit[] {
    const rows = new Array<number>(this.#count);
    for (let i = 0; i < this.#count; i++) rows[i] = i;
    return this.#top(query, rows, k);
  }

  #top(query: Float32Array, rows: readonly number[], k: number): VectorHit[] {
    const dim = this.dimension;
    const data = this.#data;
    // The best k so far, ascending by score (bestScores[0] is the one to beat).
    const bestRows: number[] = [];
    const bestScores: number[] = [];
    for (const row of rows) {
      const o = row * dim;
      let s = 0;
      for (let d = 0; d < dim; d++) s += (data[o + d] as number) * (query[d] as number);
      if (bestRows.length === k && s <= (bestScores[0] as number)) continue;
      let at = 0;
      while (at < bestScores.length && (bestScores[at] as number) < s) at++;
      bestScores.splice(at, 0, s);
      bestRows.splice(at, 0, row);
      if (bestRows.length > k) {
        bestScores.shift();
        bestRows.shift();
      }
    }
    const out: VectorHit[] = [];
    for (let i = bestRows.length - 1; i >= 0; i--) {
      out.push({ id: this.#ids[bestRows[i] as number] as string, score: bestScores[i] as number });
    }
    return out;
  }

  /** Writes round(v / max|v| * 127) into `into` (zero padded); returns the row's scale back to v. */
  #quantise(vector: Float32Array, into: Int8Array): number {
    let max = 0;
    for (const x of vector) max = Math.max(max, Math.abs(x));
    const f = max > 0 ? 127 / max : 0;
    into.fill(0);
    for (let d = 0; d < vector.length; d++) into[d] = Math.round((vector[d] as number) * f);
    return max / 127;
  }

  #removeRow(row: number): void {
    const last = this.#count - 1;
    const id = this.#ids[row] as string;
    this.#rowOf.delete(id);
    if (row !== last) {
      const lastId = this.#ids[last] as string;
      this.#ids[row] = lastId;
      this.#docs[row] = this.#docs[last] as string;
      this.#rowOf.set(lastId, row);
      this.#data.copyWithin(row * this.dimension, last * this.dimension, (last + 1) * this.dimension);
      const { buffer } = this.#kernel.memory;
      const at = this.#layout;
      new Uint8Array(buffer).copyWithin(
        at.data + row * this.#stride,
        at.data + last * this.#stride,
        at.data + (last + 1) * this.#stride,
      );
      const scales = new Float32Array(buffer, at.scales, this.#capacity);
      scales[row] = scales[last] as number;
    }
    this.#ids.length = last;
    this.#docs.length = last;
    this.#count = last;
  }

  #grow(): void {
    const capacity = Math.max(256, this.#capacity * 2);
    const data = new Float32Array(capacity * this.dimension);
    data.set(this.#data.subarray(0, this.#count * this.dimension));
    this.#data = data;
    // The int8 rows and scales move to the new layout (copied out first: the regions overlap).
    const memory = this.#kernel.memory;
    const old = this.#layout;
    const rows = new Uint8Array(memory.buffer, old.data, this.#count * this.#stride).slice();
    const scales = new Float32Array(memory.buffer, old.scales, this.#count).slice();
    const next = layout(capacity, this.#stride);
    const pages = Math.ceil(next.end / 65536) - memory.buffer.byteLength / 65536;
    if (pages > 0) memory.grow(pages);
    new Uint8Array(memory.buffer, next.data, rows.length).set(rows);
    new Float32Array(memory.buffer, next.scales, scales.length).set(scales);
    this.#layout = next;
    this.#capacity = capacity;
  }
}
