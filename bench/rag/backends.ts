/**
 * The ChunkIndex adapters under test, each with what it needs started and cleaned up: SqlChunkIndex on
 * embedded SQLite (a temp dir) and on PostgreSQL (a new database on DATABASE_URL), and Qdrant (the shared
 * binary, started here on free ports, stopped after). Each
 * benchmark phase gets its own collection or database, so phases do not share term statistics.
 */

import type { ChunkIndex } from '../../src/retrieval/index.js';
import { QdrantChunkIndex, SqlChunkIndex } from '../../src/retrieval/index.js';
import { type Db, openDb } from '../../src/storage/index.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/databases.js';
import { type QdrantProcess, qdrantAvailable, startQdrant, waitIndexed } from './qdrant-process.js';

export interface Backend {
  /** Table label, e.g. `SQLite` or `Qdrant`. */
  label: string;
  /** A fresh, empty, prepared index (its own collection / database). */
  open(embedding: { id: string; dimension: number }): Promise<ChunkIndex>;
  /** Waits until what was written is served as in steady state (Qdrant: HNSW built); a note if it was not. */
  settle(): Promise<string | undefined>;
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

/** A prepared SqlChunkIndex on a fresh database (migrated by openDb, as the server does). */
export async function openSqlIndex(
  backend: 'sqlite' | 'postgres',
  embedding: { id: string; dimension: number },
): Promise<{ db: Db; database: TestDatabase; index: ChunkIndex }> {
  const database = await createTestDatabase(backend);
  const db = await openDb({
    dataDir: database.dataDir,
    ...(database.databaseUrl ? { databaseUrl: database.databaseUrl } : {}),
    owner: true,
  });
  const index = new SqlChunkIndex(db);
  await index.prepare(embedding);
  return { db, database, index };
}

/** SqlChunkIndex on a fresh database per `open`. */
function sqlBackend(label: string, backend: 'sqlite' | 'postgres'): Backend {
  const opened: Array<{ db: Db; database: TestDatabase; index: ChunkIndex }> = [];
  return {
    label,
    async open(embedding) {
      const held = await openSqlIndex(backend, embedding);
      opened.push(held);
      return held.index;
    },
    async settle() {
      return undefined;
    },
    async stop() {
      for (const { db, database, index } of opened) {
        await index.close();
        await db.close();
        await database.drop();
      }
    },
  };
}

export async function sqliteBackend(): Promise<Backend> {
  return sqlBackend('SQLite', 'sqlite');
}

export async function postgresBackend(): Promise<Backend | undefined> {
  return process.env.DATABASE_URL ? sqlBackend('PostgreSQL', 'postgres') : undefined;
}
