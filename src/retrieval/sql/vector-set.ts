import { TopK } from './top-k.js';
import { WASM_BASE64 } from './wasm/int8-scores.js';

/**
 * One tenant's vectors in memory, quantised to int8 (one scale per row) in a WebAssembly instance's
 * memory and scored against the query quantised to 7 bits with 128-bit relaxed SIMD
 * (src/retrieval/sql/wasm/int8-scores.wat): a
 * quarter of float32's bytes, and the scan is memory-bound. `candidates` gives the rows nearest by that
 * approximate score; the caller reranks them with the exact float32 vectors it keeps (SqlChunkIndex
 * reads them from the database, so memory holds ~0.4 KB per 384-dim vector, not 1.9). Measured in
 * docs/decisions.md with bench/vector-index.ts.
 */
export interface VectorHit {
  id: string;
  score: number;
}

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
  scores(data: number, scales: number, sums: number, n: number, dim: number, query: number, out: number): void;
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
  const sums = scales + capacity * 4;
  const out = sums + capacity * 4;
  const data = out + capacity * 4;
  return { query, scales, sums, out, data, end: data + capacity * stride };
}

export class VectorSet {
  readonly dimension: number;
  /** Bytes per int8 row: the dimension rounded up to the SIMD width. */
  readonly #stride: number;
  readonly #kernel = kernel();
  #capacity = 0;
  #count = 0;
  #layout = layout(0, 16);
  #view: Int8Array | undefined;
  readonly #ids: string[] = [];
  readonly #docs: string[] = [];
  readonly #rowOf = new Map<string, number>();
  /**
   * Rows per document: a document with none (every new one: TenantSets removes a document's vectors before
   * it puts its chunks) is not looked for. The search for its rows is a pass over every row, 1M string
   * comparisons a document at a million chunks (bench:rag-scale: searches waited 200 ms behind writes).
   */
  readonly #rowsOfDoc = new Map<string, number>();

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
    } else {
      this.#tally(this.#docs[row] as string, -1);
    }
    this.#docs[row] = documentId;
    this.#tally(documentId, 1);
    const bytes = this.#bytes();
    const { scale, sum } = this.#quantise(vector, bytes, this.#layout.data + row * this.#stride);
    new Float32Array(bytes.buffer, this.#layout.scales, this.#capacity)[row] = scale;
    new Int32Array(bytes.buffer, this.#layout.sums, this.#capacity)[row] = sum;
  }

  /** Removes the document's vectors (moving the last rows into the holes). */
  removeDocument(documentId: string): void {
    let left = this.#rowsOfDoc.get(documentId) ?? 0;
    for (let row = this.#count - 1; row >= 0 && left > 0; row--) {
      if (this.#docs[row] === documentId) {
        this.#removeRow(row);
        left--;
      }
    }
  }

  /** The `count` rows with the highest int8 dot product with the query, best first (approximate scores). */
  candidates(query: Float32Array, count: number): VectorHit[] {
    const n = this.#count;
    if (n === 0 || count <= 0) return [];
    if (query.length !== this.dimension) {
      throw new Error(`a query of ${query.length} dimensions for a set of ${this.dimension}`);
    }
    const { buffer } = this.#kernel.memory;
    const at = this.#layout;
    this.#quantiseQuery(query, this.#bytes(), at.query);
    this.#kernel.scores(at.data, at.scales, at.sums, n, this.#stride, at.query, at.out);
    const scores = new Float32Array(buffer, at.out, n);
    const best = new TopK(Math.min(count, n));
    let floor = best.floor;
    for (let row = 0; row < n; row++) {
      const s = scores[row] as number;
      if (s > floor) {
        best.offer(row, s);
        floor = best.floor;
      }
    }
    return best.best().map(({ row, score }) => ({ id: this.#ids[row] as string, score }));
  }

  /** A view of the whole memory (a new one after the memory grew: the old buffer is detached). */
  #bytes(): Int8Array {
    const { buffer } = this.#kernel.memory;
    if (this.#view?.buffer !== buffer) this.#view = new Int8Array(buffer);
    return this.#view;
  }

  /**
   * Writes round(v / max|v| * 127) at `offset` (zero padded to the stride); returns the scale back to v
   * and the sum of the int8 values (the kernel removes the query's offset with it).
   */
  #quantise(vector: Float32Array, into: Int8Array, offset: number): { scale: number; sum: number } {
    const max = maxAbs(vector);
    const f = max > 0 ? 127 / max : 0;
    let sum = 0;
    for (let d = 0; d < vector.length; d++) {
      const q = Math.round((vector[d] as number) * f);
      into[offset + d] = q;
      sum += q;
    }
    for (let d = vector.length; d < this.#stride; d++) into[offset + d] = 0;
    return { scale: max / 127, sum };
  }

  /** The query in 7 bits, offset into 1..127: round(v / max|v| * 63) + 64 (the kernel's unsigned operand). */
  #quantiseQuery(query: Float32Array, into: Int8Array, offset: number): void {
    const max = maxAbs(query);
    const f = max > 0 ? 63 / max : 0;
    for (let d = 0; d < query.length; d++) into[offset + d] = Math.round((query[d] as number) * f) + 64;
    for (let d = query.length; d < this.#stride; d++) into[offset + d] = 64;
  }

  #tally(documentId: string, by: number): void {
    const n = (this.#rowsOfDoc.get(documentId) ?? 0) + by;
    if (n > 0) this.#rowsOfDoc.set(documentId, n);
    else this.#rowsOfDoc.delete(documentId);
  }

  #removeRow(row: number): void {
    const last = this.#count - 1;
    const id = this.#ids[row] as string;
    this.#tally(this.#docs[row] as string, -1);
    this.#rowOf.delete(id);
    if (row !== last) {
      const lastId = this.#ids[last] as string;
      this.#ids[row] = lastId;
      this.#docs[row] = this.#docs[last] as string;
      this.#rowOf.set(lastId, row);
      const { buffer } = this.#kernel.memory;
      const at = this.#layout;
      new Uint8Array(buffer).copyWithin(
        at.data + row * this.#stride,
        at.data + last * this.#stride,
        at.data + (last + 1) * this.#stride,
      );
      const scales = new Float32Array(buffer, at.scales, this.#capacity);
      scales[row] = scales[last] as number;
      const sums = new Int32Array(buffer, at.sums, this.#capacity);
      sums[row] = sums[last] as number;
    }
    this.#ids.length = last;
    this.#docs.length = last;
    this.#count = last;
  }

  #grow(): void {
    const capacity = Math.max(256, this.#capacity * 2);
    // The int8 rows and scales move to the new layout (copied out first: the regions overlap).
    const memory = this.#kernel.memory;
    const old = this.#layout;
    const rows = new Uint8Array(memory.buffer, old.data, this.#count * this.#stride).slice();
    const scales = new Float32Array(memory.buffer, old.scales, this.#count).slice();
    const sums = new Int32Array(memory.buffer, old.sums, this.#count).slice();
    const next = layout(capacity, this.#stride);
    const pages = Math.ceil(next.end / 65536) - memory.buffer.byteLength / 65536;
    if (pages > 0) memory.grow(pages);
    new Uint8Array(memory.buffer, next.data, rows.length).set(rows);
    new Float32Array(memory.buffer, next.scales, scales.length).set(scales);
    new Int32Array(memory.buffer, next.sums, sums.length).set(sums);
    this.#layout = next;
    this.#capacity = capacity;
  }
}

function maxAbs(vector: Float32Array): number {
  let max = 0;
  for (let d = 0; d < vector.length; d++) {
    const x = vector[d] as number;
    if (x > max) max = x;
    else if (-x > max) max = -x;
  }
  return max;
}

/** The `k` best of `candidates` by the exact dot product with their float32 vectors; ids without one go. */
export function rerank(
  query: Float32Array,
  candidates: readonly VectorHit[],
  vectorOf: (id: string) => Float32Array | undefined,
  k: number,
): VectorHit[] {
  const out: VectorHit[] = [];
  for (const { id } of candidates) {
    const v = vectorOf(id);
    if (!v || v.length !== query.length) continue;
    let s = 0;
    for (let d = 0; d < v.length; d++) s += (v[d] as number) * (query[d] as number);
    out.push({ id, score: s });
  }
  return out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1)).slice(0, k);
}
