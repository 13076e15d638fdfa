import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { DocumentService } from '../../src/documents/document-service.js';
import type { DocumentRecord } from '../../src/documents/index.js';
import { SqlDocumentStore } from '../../src/documents/sql-document-store.js';
import type { ChunkIndex, Tenant } from '../../src/retrieval/index.js';
import { QdrantChunkIndex } from '../../src/retrieval/qdrant/qdrant-chunk-index.js';
import { SqlChunkIndex } from '../../src/retrieval/sql/sql-chunk-index.js';
import { type Db, openDb } from '../../src/storage/index.js';
import { fakeEmbedder } from '../retrieval/test-embedder.js';
import { type Backend, backends, createTestDatabase } from '../support/databases.js';
import { qdrantAvailable, startQdrant } from '../support/qdrant.js';

const A: Tenant = { accountId: 'acct_a', userId: 'u1' };
const B: Tenant = { accountId: 'acct_a', userId: 'u2' };

function record(tenant: Tenant, id: string, sizeBytes: number, createdAt: number): DocumentRecord {
  return {
    id,
    ...tenant,
    title: id,
    contentType: 'text/plain',
    sizeBytes,
    metadata: {},
    chunking: null,
    status: 'processing',
    chunkCount: 0,
    chunksEmbedded: 0,
    failure: null,
    createdAt,
  };
}

interface Write {
  tenant: Tenant;
  documents: string[];
  /** Each document's `fresh`, as the worker said. */
  fresh: boolean[];
}

/** The real index, with the writes it receives written down (what the worker asked of it). */
function recording(
  index: ChunkIndex,
  /** Runs before each lexical write reaches the index (a user acting while the worker writes). */
  beforeWrite?: (documents: readonly string[]) => Promise<void>,
): {
  index: ChunkIndex;
  writes: Write[];
  events: string[];
} {
  const writes: Write[] = [];
  /** `words` for a lexical write, `vectors` for vectors, in the order the index received them. */
  const events: string[] = [];
  const wrapped: ChunkIndex = {
    name: index.name,
    prepare: (embedding) => index.prepare(embedding),
    putChunks: (tenant, documentId, chunks) => wrapped.putDocuments(tenant, [{ documentId, chunks }]),
    putDocuments: async (tenant, documents) => {
      writes.push({ tenant, documents: documents.map((d) => d.documentId), fresh: documents.map((d) => !!d.fresh) });
      events.push('words');
      await beforeWrite?.(documents.map((d) => d.documentId));
      return index.putDocuments(tenant, documents);
    },
    putVectors: (tenant, documentId, vectors) => {
      events.push('vectors');
      return index.putVectors(tenant, documentId, vectors);
    },
    deleteDocument: (tenant, documentId) => index.deleteDocument(tenant, documentId),
    deleteTenant: (tenant) => index.deleteTenant(tenant),
    search: (tenant, query) => index.search(tenant, query),
    close: () => index.close(),
  };
  return { index: wrapped, writes, events };
}

/** A fresh database of the backend with the document store on it, closed and dropped after `run`. */
async function withStore(backend: Backend, run: (db: Db, store: SqlDocumentStore) => Promise<void>): Promise<void> {
  const database = await createTestDatabase(backend);
  const db = await openDb({ databaseUrl: database.databaseUrl, dataDir: database.dataDir, poolSize: 2 });
  try {
    await run(db, new SqlDocumentStore(db));
  } finally {
    await db.close();
    await database.drop();
  }
}

/** Waits, at most 20 s, until no document is processing. */
async function drained(rag: DocumentService): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((await rag.processingCount()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

for (const backend of backends()) {
  describe(`a backlog of documents (${backend})`, () => {
    it('indexes the waiting small documents in one write per user, all before embedding any, each found by its owner only', () =>
      withStore(backend, async (db, store) => {
        // Stored before any worker runs, as after a restart with jobs left: 30 small documents of two
        // users interleaved, an empty one, and one above the small-document size that goes on its own.
        const now = Date.now();
        const docs: Array<{ tenant: Tenant; id: string; text: string }> = [];
        for (let i = 0; i < 30; i++) {
          const tenant = i % 3 === 0 ? B : A;
          docs.push({
            tenant,
            id: `doc_${String(i).padStart(2, '0')}`,
            text: `Report ${i}: the marker word quokka${i}.`,
          });
        }
        for (const [n, d] of docs.entries())
          await store.insert(record(d.tenant, d.id, d.text.length, now + n), d.text, []);
        await store.insert(record(A, 'doc_empty', 3, now + 40), '   ', []);
        const large = `${'Basalt columns cool slowly. '.repeat(2600)}The end word is kestrel.`;
        await store.insert(record(A, 'doc_large', large.length, now + 41), large, []);

        const { index, writes, events } = recording(new SqlChunkIndex(db));
        const rag = new DocumentService({
          store,
          index,
          embedder: fakeEmbedder('backlog-model', 16),
          clock: Date.now,
          logger: pino({ level: 'silent' }),
          soleWorker: true,
        });
        await rag.start();
        try {
          await drained(rag);
          assert.equal(await rag.processingCount(), 0, 'every job finished');

          // The 30 small documents: one write for each user (two users), the large one on its own.
          const small = writes.filter((w) => w.documents.some((id) => /^doc_\d+$/.test(id)));
          assert.deepEqual(small.map((w) => [w.tenant.userId, w.documents.length]).sort(), [
            ['u1', 20],
            ['u2', 10],
          ]);
          assert.deepEqual(
            writes.filter((w) => w.documents.includes('doc_large')).map((w) => w.documents),
            [['doc_large']],
          );
          // First claims all: nothing of theirs was indexed before, so none is looked for.
          assert.ok(
            writes.every((w) => w.fresh.every(Boolean)),
            JSON.stringify(writes.map((w) => w.fresh)),
          );
          // Lexical first: every document was findable by its words before any was embedded.
          assert.equal(events.indexOf('vectors'), events.lastIndexOf('words') + 1, events.join(' '));

          for (const d of docs) {
            const got = await rag.get(d.tenant, d.id);
            assert.equal(got.status, 'ready', d.id);
            assert.equal(got.chunksEmbedded, got.chunkCount, d.id);
            const word = d.text.match(/quokka\d+/)?.[0] as string;
            const own = await rag.search(d.tenant, word, 3);
            assert.equal(own[0]?.documentId, d.id, `${d.id} found by its owner`);
            const other = d.tenant === A ? B : A;
            assert.ok(!(await rag.search(other, word, 3)).some((h) => h.documentId === d.id), `${d.id} hidden`);
          }
          const empty = await rag.get(A, 'doc_empty');
          assert.equal(empty.status, 'failed');
          assert.equal(empty.failure?.code, 'EMPTY_DOCUMENT');
          assert.equal((await rag.get(A, 'doc_large')).status, 'ready');
          assert.equal((await rag.search(A, 'kestrel', 1))[0]?.documentId, 'doc_large');
          // Rows in the store: every small document's chunk, with its owner.
          const rows = await db.query<{ n: number }>(
            "SELECT count(*) AS n FROM rag_chunks WHERE document_id LIKE 'doc\\_%' ESCAPE '\\' AND document_id <> 'doc_large'",
          );
          assert.equal(Number(rows[0]?.n), 30);
        } finally {
          await rag.close();
        }
      }));

    // On PostgreSQL with a real Qdrant (the production pair) when the binary is there: the adapter that
    // skips its delete for fresh documents is the one that must still replace for a second claim.
    const withQdrant = backend === 'postgres' && qdrantAvailable();
    it(`replaces what an earlier claim of a document left in the index (its worker died after the index write)${withQdrant ? ', on Qdrant' : ''}`, async () => {
      const qdrant = withQdrant ? await startQdrant() : undefined;
      const text = 'The falcon report: peregrine falcons nest on cliffs.';
      try {
        await withStore(backend, async (db, store) => {
          await store.insert(record(A, 'doc_again', text.length, Date.now()), text, []);
          // An earlier worker claimed it (a lease already run out) and wrote to the index, then died
          // before the store: a chunk the document no longer makes is there.
          const [claimed] = await store.claimUnchunked(Date.now() - 600_000, 1, 16_000, 1);
          assert.equal(claimed?.attempts, 1);
          const { index, writes } = recording(
            qdrant ? new QdrantChunkIndex({ url: qdrant.url, collection: 'backlog' }) : new SqlChunkIndex(db),
          );
          await index.prepare();
          await index.putChunks(A, 'doc_again', [
            {
              id: 'doc_again_c7',
              documentId: 'doc_again',
              ordinal: 7,
              text: 'A stale wombat.',
              charStart: 0,
              charEnd: 15,
              page: null,
            },
          ]);
          writes.length = 0;
          const rag = new DocumentService({
            store,
            index,
            clock: Date.now,
            logger: pino({ level: 'silent' }),
            soleWorker: true,
          });
          await rag.start();
          try {
            await drained(rag);
            assert.equal((await rag.get(A, 'doc_again')).status, 'ready');
            assert.deepEqual(
              writes.map((w) => w.fresh),
              [[false]],
              'a second claim is not fresh',
            );
            assert.equal((await rag.search(A, 'peregrine', 3))[0]?.documentId, 'doc_again');
            // From the index itself: the service's search would hide a chunk the store has no row for anyway.
            assert.deepEqual(
              await index.search(A, { text: 'wombat', k: 3, mode: 'lexical' }),
              [],
              'the stale chunk is gone',
            );
          } finally {
            await rag.close();
          }
        });
      } finally {
        await qdrant?.stop();
      }
    });

    it('a document deleted while its claim is written is left out, and the rest of the claim is ingested', () =>
      withStore(backend, async (db, store) => {
        const now = Date.now();
        for (let i = 0; i < 5; i++) {
          const text = `Field note ${i}: the word is marmot${i}.`;
          await store.insert(record(A, `doc_m${i}`, text.length, now + i), text, []);
        }
        let rag: DocumentService | undefined;
        // The user deletes doc_m2 while the worker writes the claim that holds it: after the job read it,
        // before its chunks reach the index and the store.
        const { index, writes } = recording(new SqlChunkIndex(db), async (documents) => {
          if (documents.includes('doc_m2')) await rag?.delete(A, 'doc_m2');
        });
        rag = new DocumentService({
          store,
          index,
          clock: Date.now,
          logger: pino({ level: 'silent' }),
          soleWorker: true,
        });
        await rag.start();
        try {
          await drained(rag);
          assert.deepEqual(
            writes.map((w) => w.documents.length),
            [5],
            'the five were one claim',
          );
          for (const i of [0, 1, 3, 4]) {
            const doc = await rag.get(A, `doc_m${i}`);
            assert.equal(doc.status, 'ready', `doc_m${i}: ${JSON.stringify(doc.failure)}`);
            assert.equal((await rag.search(A, `marmot${i}`, 3))[0]?.documentId, `doc_m${i}`);
          }
          assert.equal(await store.get(A, 'doc_m2'), undefined);
          assert.deepEqual(
            await index.search(A, { text: 'marmot2', k: 3, mode: 'lexical' }),
            [],
            'its chunks, written after the delete, were removed again',
          );
          const rows = await db.query<{ n: number }>(
            "SELECT count(*) AS n FROM rag_chunks WHERE document_id = 'doc_m2'",
          );
          assert.equal(Number(rows[0]?.n), 0);
        } finally {
          await rag.close();
        }
      }));
  });
}
