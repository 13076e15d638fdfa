import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chatRequests, type ResponsesHarness, startResponses, systemText } from '../responses/support.js';
import { backends } from '../support/databases.js';
import { manualClock } from '../support/server.js';

/**
 * What a vector store's life does to what is stored and found, over real HTTP: expiry (a store past its
 * `expires_after` answers `expired`, refuses searches, and its documents leave the index), an end user's erase
 * (their files and stores go, the account's stay), and chat's `vector_store_ids` (the store's chunks reach the
 * model as sources that cite the file).
 */
const DAY_MS = 86_400_000;

type Row = { n: number | string };

for (const backend of backends()) {
  describe(`vector stores over their life (${backend})`, () => {
    let h: ResponsesHarness;
    const clock = manualClock(Date.now());

    before(async () => {
      h = await startResponses(backend, { clock });
    });
    after(() => h?.close());

    const upload = async (text: string, name: string, userId?: string) => {
      const form = new FormData();
      form.append('file', new Blob([text]), name);
      form.append('purpose', 'assistants');
      if (userId) form.append('user_id', userId);
      const res = await fetch(`${h.server.url}/z1/files`, {
        method: 'POST',
        body: form,
        headers: { authorization: `Bearer ${h.apiKey}` },
      });
      assert.equal(res.status, 200, await res.clone().text());
      return ((await res.json()) as { id: string }).id;
    };
    const storeDocuments = async (storeId: string) => {
      const [row] = await h.server.usageRows<Row>('SELECT COUNT(*) AS n FROM rag_documents WHERE user_id = $1', [
        `\u0001vector_store:${storeId}`,
      ]);
      return Number(row?.n ?? 0);
    };

    it('a store past expires_after is expired: searches 400 VECTOR_STORE_EXPIRED and its documents leave', async () => {
      const fileId = await upload('The archive room is on the fourth floor.', 'archive.txt');
      const store = await h.client.vectorStores.create({
        name: 'short-lived',
        expires_after: { anchor: 'last_active_at', days: 1 },
      });
      assert.equal(store.status, 'completed');
      assert.equal(store.expires_at, (store.last_active_at ?? 0) + 86_400);
      await h.client.vectorStores.files.createAndPoll(store.id, { file_id: fileId });
      assert.equal((await h.client.vectorStores.search(store.id, { query: 'archive room floor' })).data.length, 1);
      assert.equal(await storeDocuments(store.id), 1);

      clock.advance(DAY_MS - 60_000);
      // A search is activity: the day starts again from it.
      await h.client.vectorStores.search(store.id, { query: 'archive' });
      clock.advance(2 * 60_000);
      assert.equal((await h.client.vectorStores.retrieve(store.id)).status, 'completed');

      clock.advance(DAY_MS);
      assert.equal((await h.client.vectorStores.retrieve(store.id)).status, 'expired');
      const refused = await h.server.request('POST', `/z1/vector_stores/${store.id}/search`, {
        apiKey: h.apiKey,
        body: { query: 'archive' },
      });
      assert.equal(refused.status, 400);
      assert.equal((refused.body as { code: string }).code, 'VECTOR_STORE_EXPIRED');
      for (let i = 0; i < 100 && (await storeDocuments(store.id)) > 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await storeDocuments(store.id), 0, 'the expired store still has documents');
      // The store and its file stay until deleted.
      assert.equal((await h.client.files.retrieve(fileId)).id, fileId);
      assert.equal((await h.client.vectorStores.retrieve(store.id)).status, 'expired');
    });

    it("an end user's erase deletes their files and stores, exported before; the account's own stay", async () => {
      const mine = await upload('Alice keeps her notes in the blue binder.', 'alice.txt', 'alice');
      const accounts = await upload('The company picnic is in June.', 'picnic.txt');
      const aliceStore = await h.server.request<{ id: string; user_id: string }>('POST', '/z1/vector_stores', {
        apiKey: h.apiKey,
        body: { name: 'alice', user_id: 'alice' },
      });
      assert.equal(aliceStore.body.user_id, 'alice');
      const shared = await h.client.vectorStores.create({ name: 'shared', file_ids: [mine, accounts] });

      const exported = await h.server.request<{ files: Array<{ id: string }>; vector_stores: Array<{ id: string }> }>(
        'GET',
        '/z1/users/alice/export',
        { apiKey: h.apiKey },
      );
      assert.deepEqual(
        exported.body.files.map((f) => f.id),
        [mine],
      );
      assert.deepEqual(
        exported.body.vector_stores.map((s) => s.id),
        [aliceStore.body.id],
      );

      const erased = await h.server.request<{ erased: { files: number; vector_stores: number } }>(
        'DELETE',
        '/z1/users/alice',
        { apiKey: h.apiKey },
      );
      assert.equal(erased.status, 200, erased.text);
      assert.equal(erased.body.erased.files, 1);
      assert.equal(erased.body.erased.vector_stores, 1);
      for (const path of [`/z1/files/${mine}`, `/z1/vector_stores/${aliceStore.body.id}`]) {
        assert.equal((await h.server.request('GET', path, { apiKey: h.apiKey })).status, 404, path);
      }
      // Alice's file left the account's store too; the account's file is still in it.
      const left = await h.client.vectorStores.files.list(shared.id);
      assert.deepEqual(
        left.data.map((f) => f.id),
        [accounts],
      );
      assert.equal((await h.client.files.retrieve(accounts)).id, accounts);
    });

    it('what clients read back: files done at creation, a change renews activity, content with its file, the query as given', async () => {
      const a = await upload('The west gate closes at dusk.', 'gate.txt');
      const b = await upload('Visitors sign in at the lodge.', 'lodge.txt');
      const store = await h.client.vectorStores.create({ name: 'grounds', file_ids: [a, b] });
      assert.deepEqual(store.file_counts, { in_progress: 0, completed: 2, failed: 0, cancelled: 0, total: 2 });

      clock.advance(5_000);
      const renamed = await h.client.vectorStores.update(store.id, { name: 'grounds 2' });
      assert.ok((renamed.last_active_at ?? 0) > (store.last_active_at ?? 0), 'a change is activity');

      const files = await h.client.vectorStores.files.list(store.id);
      assert.deepEqual(
        files.data.map((f) => f.chunking_strategy?.type),
        ['auto', 'auto'],
      );
      const fixed = await h.server.request<{ chunking_strategy: unknown }>(
        'POST',
        `/z1/vector_stores/${store.id}/files`,
        {
          apiKey: h.apiKey,
          body: {
            file_id: await upload('The orchard is north of the lodge.', 'orchard.txt'),
            attributes: { area: 'north' },
            chunking_strategy: { type: 'static', static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 50 } },
          },
        },
      );
      assert.deepEqual(fixed.body.chunking_strategy, {
        type: 'static',
        static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 50 },
      });

      const content = await h.server.request<Record<string, unknown>>(
        'GET',
        `/z1/vector_stores/${store.id}/files/${a}/content`,
        { apiKey: h.apiKey },
      );
      const parts = [{ type: 'text', text: 'The west gate closes at dusk.' }];
      assert.deepEqual(content.body, {
        object: 'vector_store.file_content.page',
        data: parts,
        has_more: false,
        next_page: null,
        file_id: a,
        filename: 'gate.txt',
        attributes: {},
        content: parts,
      });

      const asked = async (query: unknown) =>
        (
          await h.server.request<{ search_query: unknown }>('POST', `/z1/vector_stores/${store.id}/search`, {
            apiKey: h.apiKey,
            body: { query },
          })
        ).body.search_query;
      assert.equal(await asked('west gate'), 'west gate');
      assert.deepEqual(await asked(['west gate', 'lodge']), ['west gate', 'lodge']);
    });

    it("chat's vector_store_ids: the store's chunk reaches the model and the citation names the file", async () => {
      const fileId = await upload('The rooftop garden opens at 6pm on Fridays.', 'garden.txt');
      const store = await h.client.vectorStores.create({ name: 'garden' });
      await h.client.vectorStores.files.createAndPoll(store.id, { file_id: fileId });
      const before = chatRequests(h.upstream).length;
      const chat = await h.server.request<{ citations: Array<Record<string, unknown>> }>(
        'POST',
        '/z1/chat/completions',
        {
          apiKey: h.apiKey,
          body: {
            model: 'PV-TURBO',
            user_id: 'bob',
            use_rag: true,
            vector_store_ids: [store.id],
            messages: [{ role: 'user', content: 'When does the rooftop garden open?' }],
          },
        },
      );
      assert.equal(chat.status, 200, chat.text);
      assert.equal(chat.body.citations[0]?.document_id, fileId);
      assert.equal(chat.body.citations[0]?.title, 'garden.txt');
      const sent = chatRequests(h.upstream).slice(before);
      assert.match(systemText(sent.at(-1)), /rooftop garden opens at 6pm/);
    });
  });
}
