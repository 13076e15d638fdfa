import assert from 'node:assert/strict';
import { it } from 'node:test';
import { A1, A2, B1, B2, chunks, e, ids, MODEL, MODES, type WithIndex } from './fixtures.js';

/** The contract's cases of tenants kept apart, deletion, replacement, and preparing an index over a store. */
export function lifecycleCases(withIndex: WithIndex): void {
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
}
