import assert from 'node:assert/strict';
import type { Chunk, ChunkHit, ChunkIndex, SearchMode, Tenant } from '../../../src/retrieval/index.js';

/** What every case of the `ChunkIndex` contract shares: tenants, hand-made vectors, chunks, a fresh index per case. */
export interface OpenedIndex {
  /** A fresh, empty, not yet prepared index over its own store. */
  index: ChunkIndex;
  /** A second index over the same store, as another replica would open it (not yet prepared). */
  reopen(): Promise<ChunkIndex>;
  /** Removes the store; the suite closes the indexes it was given first. */
  cleanup(): Promise<void>;
}

export const MODEL = { id: 'test-model', dimension: 8 } as const;
export const MODES: readonly SearchMode[] = ['hybrid', 'lexical', 'dense'];

export const A1: Tenant = { accountId: 'acct_a', userId: 'u1' };
export const A2: Tenant = { accountId: 'acct_a', userId: 'u2' };
export const B1: Tenant = { accountId: 'acct_b', userId: 'u1' };
export const B2: Tenant = { accountId: 'acct_b', userId: 'u2' };

/** A unit vector from (dimension, weight) pairs. */
export function vec(...parts: Array<[number, number]>): Float32Array {
  const v = new Float32Array(MODEL.dimension);
  for (const [i, w] of parts) v[i] = w;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}
export const e = (i: number) => vec([i, 1]);

export function chunks(documentId: string, texts: readonly string[], ids?: readonly string[]): Chunk[] {
  let at = 0;
  return texts.map((text, ordinal) => {
    const chunk: Chunk = {
      id: ids?.[ordinal] ?? `${documentId}_c${ordinal}`,
      documentId,
      ordinal,
      text,
      charStart: at,
      charEnd: at + text.length,
      page: null,
    };
    at += text.length + 2;
    return chunk;
  });
}

export const ids = (hits: readonly ChunkHit[]) => hits.map((h) => h.chunkId);

export function assertBestFirst(hits: readonly ChunkHit[], what: string): void {
  for (let i = 1; i < hits.length; i++) {
    const prev = hits[i - 1] as ChunkHit;
    const cur = hits[i] as ChunkHit;
    assert.ok(prev.score >= cur.score, `${what}: hit ${i} scores ${cur.score} above hit ${i - 1} (${prev.score})`);
  }
  assert.equal(new Set(ids(hits)).size, hits.length, `${what}: a chunk came back twice: ${ids(hits)}`);
}

type IndexCase = (index: ChunkIndex, opened: OpenedIndex, reopen: () => Promise<ChunkIndex>) => Promise<void>;

/** Wraps a case so it runs on a fresh index (prepared unless `prepare` is false); closes everything it opened, even on failure. */
export type WithIndex = (body: IndexCase, prepare?: boolean) => () => Promise<void>;

export function withIndexOf(open: () => Promise<OpenedIndex>): WithIndex {
  return (body, prepare = true) =>
    async () => {
      const opened = await open();
      const extra: ChunkIndex[] = [];
      const reopen = async () => {
        const other = await opened.reopen();
        extra.push(other);
        return other;
      };
      try {
        if (prepare) await opened.index.prepare(MODEL);
        await body(opened.index, opened, reopen);
      } finally {
        for (const other of extra) await other.close();
        await opened.index.close();
        await opened.cleanup();
      }
    };
}
