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
