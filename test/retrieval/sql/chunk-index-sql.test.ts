import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { DocumentService } from '../../../src/documents/document-service.js';
import { SqlDocumentStore } from '../../../src/documents/sql-document-store.js';
import type { Chunk, Embedder, Tenant } from '../../../src/retrieval/index.js';
import { SqlChunkIndex } from '../../../src/retrieval/sql/sql-chunk-index.js';
import { type Db, openDb } from '../../../src/storage/index.js';
import { backends, createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { chunkIndexContract } from '../chunk-index-contract.js';
import { fakeEmbedder, vectors } from '../test-embedder.js';

async function open(database: TestDatabase): Promise<Db> {
  return openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolSize: 2 });
}

function chunk(documentId: string, ordinal: number, text: string): Chunk {
  return { id: `${documentId}_c${ordinal}`, documentId, ordinal, text, charStart: 0, charEnd: text.length, page: null };
}

for (const backend of backends()) {
  // Every case on a fresh database; a replica is a second connection to it.
  chunkIndexContract(`sql, ${backend}`, async () => {
    const database = await createTestDatabase(backend);
    const dbs = [await open(database)];
    return {
      index: new SqlChunkIndex(dbs[0] as Db),
      reopen: async () => {
        const db = await open(database);
        dbs.push(db);
        return new SqlChunkIndex(db);
      },
      cleanup: async () => {
        for (const db of dbs) await db.close();
        await database.drop();
      },
    };
  });

  describe(`SqlChunkIndex (${backend})`, () => {
    const tenant: Tenant = { accountId: 'acct', userId: 'u' };

    it('answers searches that load the same user at once (documents and memory search together)', async () => {
      const database = await createTestDatabase(backend);
      const [db1, db2] = [await open(database), await open(database)];
      try {
        const writer = new SqlChunkIndex(db1);
        const other: Tenant = { accountId: 'acct', userId: 'v' };
        for (const [who, doc] of [
          [tenant, 'da'],
          [other, 'db'],
        ] as const) {
          await writer.putChunks(
            who,
            doc,
            Array.from({ length: 50 }, (_, i) => chunk(doc, i, `aircraft wing ${doc} ${i}`)),
          );
        }
        // A cold index on another connection: every search below loads its user's rows from the database.
        const cold = new SqlChunkIndex(db2);
        const searches = [tenant, tenant, other, tenant].map((who) =>
          cold.search(who, { text: 'aircraft wing', k: 5, mode: 'lexical' }),
        );
        const answers = await Promise.all(searches);
        for (const [i, hits] of answers.entries()) {
          assert.equal(hits.length, 5, `search ${i}`);
          const doc = i === 2 ? 'db' : 'da';
          assert.ok(
            hits.every((h) => h.chunkId.startsWith(`${doc}_`)),
            `search ${i} stays in its user's chunks`,
          );
        }
      } finally {
        await db1.close();
        await db2.close();
        await database.drop();
      }
    });

    it('keeps the in-memory vectors in step with another connection, past the int8 threshold', async () => {
      const database = await createTestDatabase(backend);
      const [db1, db2] = [await open(database), await open(database)];
      try {
        const [one, two] = [new SqlChunkIndex(db1), new SqlChunkIndex(db2)];
        await one.prepare({ id: 'm', dimension: 32 });
        await two.prepare({ id: 'm', dimension: 32 });
        const vs = vectors(3000, 32, 7);
        for (const doc of ['d0', 'd1', 'd2']) {
          const at = Number(doc.slice(1)) * 1000;
          await one.putChunks(
            tenant,
            doc,
            vs.slice(at, at + 1000).map((_, i) => chunk(doc, i, `text ${doc} ${i}`)),
          );
          await one.putVectors(
            tenant,
            doc,
            vs.slice(at, at + 1000).map((vector, i) => ({ chunkId: `${doc}_c${i}`, vector })),
          );
        }
        const query = vs[2500] as Float32Array;
        const dense = { text: '', vector: query, k: 5, mode: 'dense' } as const;
        assert.equal((await one.search(tenant, dense))[0]?.chunkId, 'd2_c500');
        assert.equal((await two.search(tenant, dense))[0]?.chunkId, 'd2_c500');
        // Deleted through the other connection: the first one's memory must not answer with it.
        await two.deleteDocument(tenant, 'd2');
        const after = await one.search(tenant, { ...dense, k: 50 });
        assert.equal(after.length, 50);
        assert.ok(
          after.every((h) => !h.chunkId.startsWith('d2_')),
          'a deleted document came back',
        );
        // Its own writes move its memory on; the other connection follows by generation.
        await one.putChunks(tenant, 'd2', [chunk('d2', 0, 'back again')]);
        await one.putVectors(tenant, 'd2', [{ chunkId: 'd2_c0', vector: query }]);
        for (const index of [one, two]) assert.equal((await index.search(tenant, dense))[0]?.chunkId, 'd2_c0');
        // Another tenant never sees them.
        assert.deepEqual(await two.search({ accountId: 'acct', userId: 'other' }, dense), []);
      } finally {
        await db1.close();
        await db2.close();
        await database.drop();
      }
    });

    it('survives a restart: vectors and words are found by a new process on the same database', async () => {
      const database = await createTestDatabase(backend);
      try {
        let db = await open(database);
        const before = new SqlChunkIndex(db);
        await before.prepare({ id: 'm', dimension: 16 });
        const [v] = vectors(1, 16, 3);
        await before.putChunks(tenant, 'd', [chunk('d', 0, 'persistent basalt')]);
        await before.putVectors(tenant, 'd', [{ chunkId: 'd_c0', vector: v as Float32Array }]);
        await before.close();
        await db.close();
        db = await open(database);
        const after = new SqlChunkIndex(db);
        await after.prepare({ id: 'm', dimension: 16 });
        assert.deepEqual(
          (await after.search(tenant, { text: 'basalt', vector: v, k: 3 })).map((h) => h.chunkId),
          ['d_c0'],
        );
        assert.equal((await after.search(tenant, { text: '', vector: v, k: 3, mode: 'dense' }))[0]?.chunkId, 'd_c0');
        await db.close();
      } finally {
        await database.drop();
      }
    });
  });
}

describe('the embedded backend (SQLite) and the embedding model', () => {
  it('refuses to start with model B on an index built with model A, naming both', async () => {
    const database = await createTestDatabase('sqlite');
    const logger = pino({ level: 'silent' });
    const service = async (db: Db, embedder: Embedder) =>
      new DocumentService({
        store: new SqlDocumentStore(db),
        index: new SqlChunkIndex(db),
        embedder,
        clock: Date.now,
        logger,
        soleWorker: true,
        readyWaitMs: 5000,
      });
    try {
      let db = await open(database);
      const a = await service(db, fakeEmbedder('model-a', 24));
      await a.start();
      const doc = await a.create(
        { accountId: 'acct', userId: 'u' },
        {
          text: 'Granite and basalt.\n\nA second paragraph about obsidian.',
          contentType: 'text/plain',
          sizeBytes: 52,
        },
      );
      assert.equal(doc.status, 'ready');
      assert.equal(doc.chunksEmbedded, doc.chunkCount);
      await a.close();
      await db.close();

      db = await open(database);
      const b = await service(db, fakeEmbedder('model-b', 48));
      await assert.rejects(b.start(), (err: Error) => {
        assert.match(err.message, /built with the embedding model model-a, but model-b is configured/);
        assert.match(err.message, /24 and 48 dimensions/);
        assert.match(err.message, /PVAI_EMBEDDING_MODEL/);
        return true;
      });
      await b.close();
      // Model A still starts, and finds the document.
      const again = await service(db, fakeEmbedder('model-a', 24));
      await again.start();
      const hits = await again.search({ accountId: 'acct', userId: 'u' }, 'obsidian', 3);
      assert.equal(hits[0]?.documentId, doc.id);
      await again.close();
      await db.close();
    } finally {
      await database.drop();
    }
  });
});
