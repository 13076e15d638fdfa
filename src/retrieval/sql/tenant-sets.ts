import { LexicalSet } from './lexical-set.js';
import { VectorSet } from './vector-set.js';

/**
 * One tenant's index in memory, loaded from rag_index_chunks in one pass and kept current by
 * TenantCache: the chunks' terms (LexicalSet) and, once any chunk has one, their int8 vectors.
 */
export class TenantSets {
  readonly lexical = new LexicalSet();
  #vectors: VectorSet | undefined;

  get vectors(): VectorSet | undefined {
    return this.#vectors;
  }

  /** Chunks held (a chunk without a vector yet counts once, like one with). */
  get size(): number {
    return Math.max(this.lexical.size, this.#vectors?.size ?? 0);
  }

  /** The document's chunks replace what it had (its old vectors go: the new chunks get theirs later). */
  putDocument(documentId: string, chunks: ReadonlyArray<{ id: string; terms: readonly string[] }>): void {
    this.removeDocument(documentId);
    for (const chunk of chunks) this.lexical.upsert(chunk.id, documentId, chunk.terms);
  }

  putVector(chunkId: string, documentId: string, vector: Float32Array): void {
    this.#vectors ??= new VectorSet(vector.length);
    this.#vectors.upsert(chunkId, documentId, vector);
  }

  removeDocument(documentId: string): void {
    this.lexical.removeDocument(documentId);
    this.#vectors?.removeDocument(documentId);
  }
}
