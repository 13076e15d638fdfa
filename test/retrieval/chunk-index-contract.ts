import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Chunk, ChunkHit, ChunkIndex, SearchMode, Tenant } from '../../src/retrieval/index.js';

/**
 * What every `ChunkIndex` adapter must do, run against each (SQL on SQLite and PostgreSQL, Qdrant).
 * Vectors are small hand-made unit vectors (8 dimensions) so the suite needs no embedding model and
 * every expected ranking follows from the arithmetic.
 */
export interface OpenedIndex {
  /** A fresh, empty, not yet prepared index over its own store. */
  index: ChunkIndex;
  /** A second index over the same store, as another replica would open it (not yet prepared). */
  reopen(): Promise<ChunkIndex>;
  /** Removes the store; the suite closes the indexes it was given first. */
  cleanup(): Promise<void>;
}

export const MODEL = { id: 'test-model', dimension: 8 } as const;
const MODES: readonly SearchMode[] = ['hybrid', 'lexical', 'dense'];

const A1: Tenant = { accountId: 'acct_a', userId: 'u1' };
const A2: Tenant = { accountId: 'acct_a', userId: 'u2' };
const B1: Tenant = { accountId: 'acct_b', userId: 'u1' };
const B2: Tenant = { accountId: 'acct_b', userId: 'u2' };

/** A unit vector from (dimension, weight) pairs. */
export function vec(...parts: Array<[number, number]>): Float32Array {
  const v = new Float32Array(MODEL.dimension);
  for (const [i, w] of parts) v[i] = w;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}
const e = (i: number) => vec([i, 1]);

function chunks(documentId: string, texts: readonly string[], ids?: readonly string[]): Chunk[] {
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

const ids = (hits: readonly ChunkHit[]) => hits.map((h) => h.chunkId);

function assertBestFirst(hits: readonly ChunkHit[], what: string): void {
  for (let i = 1; i < hits.length; i++) {
    const prev = hits[i - 1] as ChunkHit;
    const cur = hits[i] as ChunkHit;
    assert.ok(prev.score >= cur.score, `${what}: hit ${i} scores ${cur.score} above hit ${i - 1} (${prev.score})`);
  }
  assert.equal(new Set(ids(hits)).size, hits.length, `${what}: a chunk came back twice: ${ids(hits)}`);
}

export function chunkIndexContract(label: string, open: () => Promise<OpenedIndex>): void {
  describe(`ChunkIndex contract (${label})`, () => {
    /** Runs a case on a fresh, prepared index; closes everything it opened, even on failure. */
    const withIndex =
      (
        body: (index: ChunkIndex, opened: OpenedIndex, reopen: () => Promise<ChunkIndex>) => Promise<void>,
        prepare = true,
      ) =>
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

    it(
      'finds a chunk by its words right after putChunks, before it has a vector',
      withIndex(async (index) => {
        await index.putChunks(A1, 'doc1', chunks('doc1', ['The lighthouse keeper polished the brass lantern.']));
        for (const mode of ['lexical', 'hybrid'] as const) {
          const hits = await index.search(A1, { text: 'lighthouse lantern', k: 5, mode });
          assert.deepEqual(ids(hits), ['doc1_c0'], mode);
          assert.ok(Number.isFinite(hits[0]?.score), `${mode} score: ${hits[0]?.score}`);
        }
        // A hybrid query with a vector still finds it by its words while no chunk has a vector.
        const hybrid = await index.search(A1, { text: 'lighthouse lantern', vector: e(0), k: 5 });
        assert.deepEqual(ids(hybrid), ['doc1_c0']);
        const dense = await index.search(A1, { text: 'lighthouse lantern', vector: e(0), k: 5, mode: 'dense' });
        assert.deepEqual(ids(dense), [], 'a chunk without a vector has no place in a dense search');
      }),
    );

    it(
      'puts several documents in one putDocuments, each replacing what it had, and nothing of another tenant',
      withIndex(async (index) => {
        await index.putChunks(A1, 'doc1', chunks('doc1', ['An old walrus note.', 'Another walrus line.']));
        await index.putChunks(A2, 'doc1', chunks('doc1', ['The walrus of user two.']));
        await index.putDocuments(A1, [
          { documentId: 'doc1', chunks: chunks('doc1', ['A heron now, where the walrus was.'], ['doc1_new']) },
          { documentId: 'doc2', chunks: chunks('doc2', ['Heron feathers.', 'Granite and heron.']) },
          { documentId: 'doc3', chunks: chunks('doc3', ['Granite quarry.']) },
        ]);
        const heron = await index.search(A1, { text: 'heron', k: 10, mode: 'lexical' });
        assert.deepEqual(ids(heron).sort(), ['doc1_new', 'doc2_c0', 'doc2_c1']);
        assert.deepEqual(ids(await index.search(A1, { text: 'walrus', k: 10, mode: 'lexical' })), ['doc1_new']);
        assert.deepEqual(ids(await index.search(A1, { text: 'quarry', k: 10, mode: 'lexical' })), ['doc3_c0']);
        assert.deepEqual(ids(await index.search(A2, { text: 'walrus', k: 10, mode: 'lexical' })), ['doc1_c0']);
        assert.deepEqual(ids(await index.search(A2, { text: 'heron', k: 10, mode: 'lexical' })), []);
        // A document put with no chunks is emptied; the call with no documents changes nothing.
        await index.putDocuments(A1, [{ documentId: 'doc3', chunks: [] }]);
        await index.putDocuments(A1, []);
        assert.deepEqual(ids(await index.search(A1, { text: 'quarry granite', k: 10, mode: 'lexical' })), ['doc2_c1']);
        // Vectors come to chunks of any of them afterwards, as after putChunks.
        await index.putVectors(A1, 'doc2', [{ chunkId: 'doc2_c0', vector: e(3) }]);
        assert.deepEqual(ids(await index.search(A1, { text: '', vector: e(3), k: 1, mode: 'dense' })), ['doc2_c0']);
      }),
    );

    it(
      'puts fresh documents (never put before) findable like any other, and a later put still replaces them',
      withIndex(async (index) => {
        await index.putChunks(A2, 'doc1', chunks('doc1', ['The osprey of user two.']));
        const many = Array.from({ length: 300 }, (_, i) => `Osprey nest ${i}.`);
        await index.putDocuments(A1, [
          { documentId: 'doc1', chunks: chunks('doc1', many), fresh: true },
          { documentId: 'doc2', chunks: chunks('doc2', ['Osprey and kestrel.']), fresh: true },
        ]);
        assert.equal((await index.search(A1, { text: 'osprey', k: 400, mode: 'lexical' })).length, 301);
        assert.deepEqual(ids(await index.search(A1, { text: 'kestrel', k: 10, mode: 'lexical' })), ['doc2_c0']);
        assert.deepEqual(ids(await index.search(A2, { text: 'osprey', k: 10, mode: 'lexical' })), ['doc1_c0']);
        // Not fresh (a document chunked again): what it had and no longer has is gone, of it alone.
        await index.putDocuments(A1, [{ documentId: 'doc1', chunks: chunks('doc1', ['One osprey left.']) }]);
        assert.deepEqual(ids(await index.search(A1, { text: 'osprey', k: 400, mode: 'lexical' })).sort(), [
          'doc1_c0',
          'doc2_c0',
        ]);
        assert.deepEqual(ids(await index.search(A2, { text: 'osprey', k: 10, mode: 'lexical' })), ['doc1_c0']);
      }),
    );

    it(
      'finds chunks by vector after putVectors, nearest first',
      withIndex(async (index) => {
        await index.putChunks(A1, 'doc1', chunks('doc1', ['alpha words', 'beta words', 'gamma words']));
        await index.putVectors(A1, 'doc1', [
          { chunkId: 'doc1_c0', vector: e(0) },
          { chunkId: 'doc1_c1', vector: vec([0, 0.6], [1, 0.8]) },
          { chunkId: 'doc1_c2', vector: e(2) },
        ]);
        const hits = await index.search(A1, { text: 'nothing in common', vector: e(1), k: 3, mode: 'dense' });
        assert.equal(hits[0]?.chunkId, 'doc1_c1', `dense order: ${ids(hits)}`);
        assertBestFirst(hits, 'dense');
        const near0 = await index.search(A1, { text: '', vector: vec([0, 1], [1, 0.1]), k: 2, mode: 'dense' });
        assert.deepEqual(ids(near0), ['doc1_c0', 'doc1_c1']);
        const noVector = await index.search(A1, { text: 'alpha', k: 3, mode: 'dense' });
        assert.deepEqual(ids(noVector), [], 'a dense search without a query vector finds nothing');
      }),
    );

    it(
      'ranks first, in a hybrid search, the chunk that matches both by words and by meaning',
      withIndex(async (index) => {
        const texts = [
          // Words only: the query's words once, in a long chunk, and a vector far from the query's.
          'Notes on amber trade routes across the northern sea, with a sketch of a falcon seen from the deck of a slow merchant ship in autumn.',
          // Meaning only: the nearest vector, none of the words.
          'A bird of prey with golden eyes circled over the cliffs.',
          // Both: the words twice in a short chunk, and the second-nearest vector.
          'Amber falcon. The amber falcon.',
          'Unrelated text about bread and ovens.',
        ];
        await index.putChunks(A1, 'doc1', chunks('doc1', texts));
        await index.putVectors(A1, 'doc1', [
          { chunkId: 'doc1_c0', vector: e(5) },
          { chunkId: 'doc1_c1', vector: e(0) },
          { chunkId: 'doc1_c2', vector: vec([0, 1], [1, 0.3]) },
          { chunkId: 'doc1_c3', vector: e(7) },
        ]);
        const lexical = await index.search(A1, { text: 'amber falcon', k: 4, mode: 'lexical' });
        assert.equal(lexical[0]?.chunkId, 'doc1_c2', `lexical order: ${ids(lexical)}`);
        const dense = await index.search(A1, { text: 'amber falcon', vector: e(0), k: 4, mode: 'dense' });
        assert.deepEqual(ids(dense).slice(0, 2), ['doc1_c1', 'doc1_c2']);
        const hybrid = await index.search(A1, { text: 'amber falcon', vector: e(0), k: 4 });
        assert.equal(hybrid[0]?.chunkId, 'doc1_c2', `hybrid order: ${ids(hybrid)}`);
        assert.ok(ids(hybrid).includes('doc1_c0') && ids(hybrid).includes('doc1_c1'), `hybrid: ${ids(hybrid)}`);
        assertBestFirst(hybrid, 'hybrid');
      }),
    );

    it(
      'returns at most k hits, best first, in every mode',
      withIndex(async (index) => {
        const texts = Array.from({ length: 7 }, (_, i) => `harbour ${'harbour '.repeat(i)}entry number ${i}`);
        await index.putChunks(A1, 'doc1', chunks('doc1', texts));
        await index.putVectors(
          A1,
          'doc1',
          texts.map((_, i) => ({ chunkId: `doc1_c${i}`, vector: vec([0, 1], [1 + (i % 6), 0.2 * (i + 1)]) })),
        );
        for (const mode of MODES) {
          for (const k of [1, 3, 10]) {
            const hits = await index.search(A1, { text: 'harbour', vector: e(0), k, mode });
            assert.equal(hits.length, Math.min(k, texts.length), `${mode} k=${k}: ${ids(hits)}`);
            assertBestFirst(hits, `${mode} k=${k}`);
          }
        }
        const dense = await index.search(A1, { text: 'harbour', vector: e(0), k: 7, mode: 'dense' });
        assert.deepEqual(ids(dense), texts.map((_, i) => `doc1_c${i}`).slice(0, 7), 'dense order follows the cosine');
      }),
    );

    it(
      'answers search-syntax, quotes, wildcards, unicode and empty queries without throwing',
      withIndex(async (index) => {
        const known = new Set(['doc1_c0', 'doc1_c1', 'doc1_c2']);
        await index.putChunks(
          A1,
          'doc1',
          chunks('doc1', [
            'The amber falcon NEAR the harbour, "quoted" and (parenthesised) text: AND OR NOT.',
            'Café in Zürich and a 東京 ramen stall 🦊 with crème brûlée.',
            'Percent 100% and under_score and back\\slash.',
          ]),
        );
        await index.putVectors(A1, 'doc1', [{ chunkId: 'doc1_c0', vector: e(0) }]);
        const queries = [
          '',
          '   ',
          '?!.,;:',
          '*',
          '"',
          '"amber falcon"',
          '"unterminated quote',
          "it's o'clock",
          'amber*',
          '-amber',
          '+amber',
          'amber AND OR NOT',
          'NOT',
          'NEAR(amber harbour, 2)',
          'amber NEAR/2 harbour',
          'title:amber',
          'amber^2 falcon~1',
          '(((',
          ')))',
          '{[<>]}',
          "'; DROP TABLE chunks; --",
          '\\',
          '%_%',
          'café 東京 🦊',
          '\u0000 null byte',
          'amber & falcon | !harbour <-> x:*',
          'a'.repeat(5000),
        ];
        for (const text of queries) {
          for (const mode of MODES) {
            const hits = await index.search(A1, { text, vector: e(0), k: 3, mode });
            assert.ok(Array.isArray(hits), `${mode} ${JSON.stringify(text)}`);
            assert.ok(hits.length <= 3, `${mode} ${JSON.stringify(text)}: ${ids(hits)}`);
            for (const hit of hits)
              assert.ok(known.has(hit.chunkId), `${mode} ${JSON.stringify(text)}: ${hit.chunkId}`);
            assertBestFirst(hits, `${mode} ${JSON.stringify(text)}`);
          }
        }
        for (const text of ['', '   ', '?!.,;:', '*']) {
          const hits = await index.search(A1, { text, k: 3, mode: 'lexical' });
          assert.deepEqual(ids(hits), [], `a query without words finds nothing lexically: ${JSON.stringify(text)}`);
        }
        const quoted = await index.search(A1, { text: '"amber falcon"', k: 3, mode: 'lexical' });
        assert.equal(quoted[0]?.chunkId, 'doc1_c0', 'quotes do not hide the words inside them');
        const unicode = await index.search(A1, { text: 'Zürich', k: 3, mode: 'lexical' });
        assert.equal(unicode[0]?.chunkId, 'doc1_c1', 'non-ASCII words are findable');
        assert.deepEqual(await index.search(B2, { text: 'amber', vector: e(0), k: 3 }), [], 'an empty tenant');
      }),
    );

    it(
      'keeps tenants apart: the same text and vector under three tenants, each sees only its own chunk',
      withIndex(async (index) => {
        const text = 'Quarterly revenue forecast for the orchard cooperative.';
        const owners = [
          [A1, 'a1'],
          [A2, 'a2'],
          [B1, 'b1'],
        ] as const;
        // Same document id everywhere: tenants cannot see or overwrite each other's by guessing it.
        for (const [tenant, tag] of owners) {
          await index.putChunks(tenant, 'doc_same', chunks('doc_same', [text], [`${tag}_c0`]));
          await index.putVectors(tenant, 'doc_same', [{ chunkId: `${tag}_c0`, vector: e(3) }]);
        }
        for (const [tenant, tag] of owners) {
          for (const mode of MODES) {
            const hits = await index.search(tenant, { text: 'orchard revenue forecast', vector: e(3), k: 10, mode });
            assert.deepEqual(ids(hits), [`${tag}_c0`], `${tenant.accountId}/${tenant.userId} ${mode}`);
          }
        }
        for (const mode of MODES) {
          const hits = await index.search(B2, { text: 'orchard revenue forecast', vector: e(3), k: 10, mode });
          assert.deepEqual(ids(hits), [], `a tenant with nothing, ${mode}`);
        }
        // putVectors names a chunk id; another tenant naming it changes nothing of the owner's chunk
        // (the adapter may ignore the unknown chunk or reject the call; either way nothing leaks).
        await index.putVectors(B1, 'doc_same', [{ chunkId: 'a1_c0', vector: e(6) }]).catch(() => undefined);
        const stillA1 = await index.search(A1, { text: '', vector: e(3), k: 10, mode: 'dense' });
        assert.deepEqual(ids(stillA1), ['a1_c0'], 'tenant A/u1 keeps its vector');
        const nothingB1 = await index.search(B1, { text: '', vector: e(6), k: 10, mode: 'dense' });
        assert.ok(!ids(nothingB1).includes('a1_c0'), `B/u1 gained A/u1's chunk: ${ids(nothingB1)}`);
      }),
    );

    it(
      "deletes a document from lexical and dense search without touching another tenant's document of the same id",
      withIndex(async (index) => {
        const text = 'Migration plan for the glacier archive.';
        for (const [tenant, tag] of [
          [A1, 'a1'],
          [A2, 'a2'],
          [B1, 'b1'],
        ] as const) {
          await index.putChunks(tenant, 'doc1', chunks('doc1', [text], [`${tag}_doc1_c0`]));
          await index.putVectors(tenant, 'doc1', [{ chunkId: `${tag}_doc1_c0`, vector: e(4) }]);
        }
        await index.putChunks(A1, 'doc2', chunks('doc2', [`${text} Second copy.`]));
        await index.putVectors(A1, 'doc2', [{ chunkId: 'doc2_c0', vector: e(4) }]);

        await index.deleteDocument(A1, 'doc1');
        for (const mode of MODES) {
          const hits = await index.search(A1, { text: 'glacier archive', vector: e(4), k: 10, mode });
          assert.deepEqual(ids(hits), ['doc2_c0'], `A/u1 ${mode}`);
        }
        for (const [tenant, tag] of [
          [A2, 'a2'],
          [B1, 'b1'],
        ] as const) {
          for (const mode of MODES) {
            const hits = await index.search(tenant, { text: 'glacier archive', vector: e(4), k: 10, mode });
            assert.deepEqual(ids(hits), [`${tag}_doc1_c0`], `${tenant.accountId}/${tenant.userId} ${mode}`);
          }
        }
        await index.deleteDocument(A1, 'doc1'); // again: nothing left, no error
        await index.deleteDocument(B2, 'never-existed');
      }),
    );

    it(
      'deletes a tenant without touching the others',
      withIndex(async (index) => {
        for (const [tenant, tag] of [
          [A1, 'a1'],
          [A2, 'a2'],
          [B1, 'b1'],
        ] as const) {
          for (const doc of ['d1', 'd2']) {
            await index.putChunks(tenant, doc, chunks(doc, ['Tidal charts for the estuary.'], [`${tag}_${doc}_c0`]));
            await index.putVectors(tenant, doc, [{ chunkId: `${tag}_${doc}_c0`, vector: e(2) }]);
          }
        }
        await index.deleteTenant(A1);
        for (const mode of MODES) {
          const gone = await index.search(A1, { text: 'tidal estuary', vector: e(2), k: 10, mode });
          assert.deepEqual(ids(gone), [], `A/u1 ${mode}`);
          for (const [tenant, tag] of [
            [A2, 'a2'],
            [B1, 'b1'],
          ] as const) {
            const hits = await index.search(tenant, { text: 'tidal estuary', vector: e(2), k: 10, mode });
            assert.deepEqual(ids(hits).sort(), [`${tag}_d1_c0`, `${tag}_d2_c0`], `${tenant.userId} ${mode}`);
          }
        }
        await index.deleteTenant(B2); // nothing there: no error
        await index.putChunks(A1, 'd3', chunks('d3', ['Tidal charts, again.']));
        assert.deepEqual(ids(await index.search(A1, { text: 'tidal', k: 10, mode: 'lexical' })), ['d3_c0']);
      }),
    );

    it(
      "replaces a document's earlier chunks and their vectors when its chunks are put again",
      withIndex(async (index) => {
        await index.putChunks(A1, 'doc1', chunks('doc1', ['Copper kettle on the stove.', 'Woollen scarf in winter.']));
        await index.putVectors(A1, 'doc1', [
          { chunkId: 'doc1_c0', vector: e(0) },
          { chunkId: 'doc1_c1', vector: e(1) },
        ]);
        await index.putChunks(A1, 'doc2', chunks('doc2', ['Copper wire spool.']));
        await index.putChunks(A1, 'doc1', chunks('doc1', ['Granite quarry in the hills.']));
        assert.deepEqual(ids(await index.search(A1, { text: 'granite quarry', k: 10, mode: 'lexical' })), ['doc1_c0']);
        assert.deepEqual(ids(await index.search(A1, { text: 'woollen scarf', k: 10, mode: 'lexical' })), []);
        assert.deepEqual(ids(await index.search(A1, { text: 'copper', k: 10, mode: 'lexical' })), ['doc2_c0']);
        for (const v of [e(0), e(1)]) {
          const dense = await index.search(A1, { text: '', vector: v, k: 10, mode: 'dense' });
          assert.deepEqual(ids(dense), [], 'the replaced chunks keep no vector');
        }
        await index.putVectors(A1, 'doc1', [{ chunkId: 'doc1_c0', vector: e(5) }]);
        const dense = await index.search(A1, { text: '', vector: e(5), k: 10, mode: 'dense' });
        assert.deepEqual(ids(dense), ['doc1_c0']);
      }),
    );

    it(
      'prepares twice, and from two replicas at once, over the same store',
      withIndex(async (index, _opened, reopen) => {
        const other = await reopen();
        await Promise.all([index.prepare(MODEL), other.prepare(MODEL)]);
        await index.prepare(MODEL);
        await index.putChunks(A1, 'doc1', chunks('doc1', ['Saffron harvest ledger.']));
        await index.putVectors(A1, 'doc1', [{ chunkId: 'doc1_c0', vector: e(1) }]);
        const third = await reopen();
        await third.prepare(MODEL);
        for (const replica of [other, third]) {
          assert.deepEqual(ids(await replica.search(A1, { text: 'saffron', vector: e(1), k: 5 })), ['doc1_c0']);
        }
      }, false),
    );

    it(
      'refuses an index built with another embedding model or dimension, naming both',
      withIndex(async (index, _opened, reopen) => {
        await index.putChunks(A1, 'doc1', chunks('doc1', ['Indigo dye recipe.']));
        await index.putVectors(A1, 'doc1', [{ chunkId: 'doc1_c0', vector: e(1) }]);
        const other = await reopen();
        await assert.rejects(other.prepare({ id: 'other-model', dimension: 8 }), (err: Error) => {
          assert.match(err.message, /test-model/);
          assert.match(err.message, /other-model/);
          return true;
        });
        await assert.rejects(other.prepare({ id: 'test-model', dimension: 16 }), (err: Error) => {
          assert.match(err.message, /\b8\b/);
          assert.match(err.message, /\b16\b/);
          return true;
        });
        await index.prepare(MODEL);
        assert.deepEqual(ids(await index.search(A1, { text: 'indigo', vector: e(1), k: 5 })), ['doc1_c0']);
      }),
    );

    it(
      'serves lexical search without an embedding model',
      withIndex(async (index) => {
        await index.prepare();
        await index.prepare();
        await index.putChunks(A1, 'doc1', chunks('doc1', ['Juniper berries for the winter larder.']));
        for (const mode of ['hybrid', 'lexical'] as const) {
          assert.deepEqual(ids(await index.search(A1, { text: 'juniper larder', k: 5, mode })), ['doc1_c0'], mode);
        }
        assert.deepEqual(ids(await index.search(A2, { text: 'juniper larder', k: 5 })), []);
      }, false),
    );
  });
}
