/**
 * The ChunkIndex adapters under test, each with what it needs started and cleaned up: embedded SQLite
 * (a temp file), and Qdrant (the shared binary, started here on free ports, stopped after). Each
 * benchmark phase gets its own collection or database, so phases do not share term statistics.
 */
import { QdrantChunkIndex } from '../../../src/rag/qdrant-chunk-index.js';
import type { ChunkIndex } from '../../../src/rag/types.js';
import { type QdrantProcess, qdrantAvailable, startQdrant, waitIndexed } from './qdrant-process.js';

export interface Backend {
  /** Table label, e.g. `SQLite` or `Qdrant`. */
  label: string;
  /** A fresh, empty, prepared index (its own collection / database). */
  open(embedding: { id: string; dimension: number }): Promise<ChunkIndex>;
  /** Waits until what was written is served as in steady state (Qdrant: HNSW built). */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

let collections = 0;

export async function qdrantBackend(): Promise<Backend | undefined> {
  if (!qdrantAvailable()) return undefined;
  const server: QdrantProcess = await startQdrant();
  const opened: ChunkIndex[] = [];
  return {
    label: 'Qdrant',
    async open(embedding) {
      const index = new QdrantChunkIndex({ url: server.url, collection: `bench_${++collections}` });
      await index.prepare(embedding);
      opened.push(index);
      return index;
    },
    settle: () => waitIndexed(server.url),
    async stop() {
      for (const index of opened) await index.close();
      await server.stop();
    },
  };
}
