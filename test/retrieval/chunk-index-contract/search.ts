import assert from 'node:assert/strict';
import { it } from 'node:test';
import { A1, A2, assertBestFirst, B2, chunks, e, ids, MODES, vec, type WithIndex } from './fixtures.js';

/** The contract's cases of putting chunks and vectors and finding them again, in every search mode. */
export function searchCases(withIndex: WithIndex): void {
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
          for (const hit of hits) assert.ok(known.has(hit.chunkId), `${mode} ${JSON.stringify(text)}: ${hit.chunkId}`);
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
}
