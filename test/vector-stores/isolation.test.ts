import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { NotFoundError, toFile } from 'openai';
import { chatRequests, type ErrorBody, type ResponsesHarness, startResponses } from '../responses/support.js';
import { backends } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { openaiClient } from '../support/openai-client.js';

/**
 * Files and vector stores are the account's, or one end user's: another account's file, store or batch id is
 * 404 NOT_FOUND on every route that takes it (in a path, in `file_ids`, `files`, `vector_store_ids`) as if it
 * did not exist, and nothing of it is touched; a key bound to an end user sees only that end user's.
 */
const SECRET = 'The vault of the other account opens with the word kumquat-7.';
const QUESTION = 'How does the vault open?';
const POLL = { pollIntervalMs: 50 };

interface Owned {
  client: OpenAI;
  key: string;
  file: string;
  store: string;
  batch: string;
}

for (const backend of backends()) {
  describe(`files and vector stores are isolated by account and end user (${backend})`, () => {
    let h: ResponsesHarness;
    let mine: Owned;
    let theirs: Owned;

    /** A file (with the planted secret), a store holding it, and a batch of it, made through `client`. */
    const own = async (client: OpenAI, key: string, tag: string): Promise<Owned> => {
      const file = await client.files.create({
        file: await toFile(Buffer.from(`${tag}: ${SECRET}\n`), `${tag}.txt`),
        purpose: 'assistants',
      });
      const store = await client.vectorStores.create({ name: tag });
      await client.vectorStores.files.createAndPoll(store.id, { file_id: file.id }, POLL);
      const batch = await client.vectorStores.fileBatches.createAndPoll(store.id, { file_ids: [file.id] }, POLL);
      return { client, key, file: file.id, store: store.id, batch: batch.id };
    };
    const call = (method: string, path: string, key: string, body?: unknown) =>
      h.server.request<ErrorBody>(method, path, { apiKey: key, ...(body === undefined ? {} : { body }) });
    const notFound = async (method: string, path: string, key: string, body?: unknown, names?: string) => {
      const res = await call(method, path, key, body);
      assert.equal(res.status, 404, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.body.code, 'NOT_FOUND', `${method} ${path}`);
      assert.equal(res.body.error.code, 'not_found');
      assert.doesNotMatch(res.text, /kumquat/, 'nothing of the file leaks');
      if (names) assert.ok(res.text.includes(names), `${method} ${path}: the refusal names ${names}: ${res.text}`);
    };
    const filesOf = async (o: Owned) => (await o.client.vectorStores.files.list(o.store)).data.map((f) => f.id);

    before(async () => {
      h = await startResponses(backend, {
        defaultText: 'Noted [1].',
        config: { embeddingModel: EMBEDDING_MODEL },
      });
      const other = await h.server.createAccount('business', 1000);
      mine = await own(h.client, h.apiKey, 'mine');
      theirs = await own(openaiClient(h.server.url, other.apiKey), other.apiKey, 'theirs');
    });
    after(() => h?.close());

    it("another account's file id is 404 on the file routes, and the file stays whole", async () => {
      for (const [method, path] of [
        ['GET', `/z1/files/${theirs.file}`],
        ['GET', `/z1/files/${theirs.file}/content`],
        ['DELETE', `/z1/files/${theirs.file}`],
        ['GET', `/z1/files?after=${theirs.file}`],
      ] as const) {
        await notFound(method, path, h.apiKey);
      }
      assert.ok(!(await h.client.files.list()).data.some((f) => f.id === theirs.file), 'not in the list');
      assert.equal((await theirs.client.files.retrieve(theirs.file)).id, theirs.file, 'still there for its account');
      const bytes = Buffer.from(await (await theirs.client.files.content(theirs.file)).arrayBuffer());
      assert.ok(bytes.toString().includes('kumquat-7'));
    });

    it("another account's file id cannot be attached: by file_id, in a new store's file_ids, in a batch", async () => {
      const storesBefore = (await h.client.vectorStores.list()).data.length;
      await notFound('POST', `/z1/vector_stores/${mine.store}/files`, h.apiKey, { file_id: theirs.file }, theirs.file);
      await notFound(
        'POST',
        '/z1/vector_stores',
        h.apiKey,
        { name: 'x', file_ids: [mine.file, theirs.file] },
        theirs.file,
      );
      assert.equal((await h.client.vectorStores.list()).data.length, storesBefore, 'no store was created');
      for (const body of [{ file_ids: [mine.file, theirs.file] }, { files: [{ file_id: theirs.file }] }]) {
        await notFound('POST', `/z1/vector_stores/${mine.store}/file_batches`, h.apiKey, body, theirs.file);
      }
      assert.deepEqual(await filesOf(mine), [mine.file], 'nothing was attached');
      await assert.rejects(
        h.client.vectorStores.files.create(mine.store, { file_id: theirs.file }),
        (e: unknown) => e instanceof NotFoundError,
      );
      const found = await h.client.vectorStores.search(mine.store, { query: QUESTION });
      assert.ok(found.data.every((r) => r.file_id === mine.file));
    });

    it("another account's store id is 404 on every store route, and the store is untouched", async () => {
      const vs = `/z1/vector_stores/${theirs.store}`;
      const routes: Array<[string, string, unknown?]> = [
        ['GET', vs],
        ['POST', vs, { name: 'hijacked' }],
        ['POST', `${vs}/search`, { query: QUESTION }],
        ['GET', `${vs}/files`],
        ['POST', `${vs}/files`, { file_id: mine.file }],
        ['GET', `${vs}/files/${theirs.file}`],
        ['POST', `${vs}/files/${theirs.file}`, { attributes: { x: 'y' } }],
        ['GET', `${vs}/files/${theirs.file}/content`],
        ['DELETE', `${vs}/files/${theirs.file}`],
        ['POST', `${vs}/file_batches`, { file_ids: [mine.file] }],
        ['GET', `${vs}/file_batches/${theirs.batch}`],
        ['POST', `${vs}/file_batches/${theirs.batch}/cancel`],
        ['GET', `${vs}/file_batches/${theirs.batch}/files`],
        ['GET', `/z1/vector_stores/${mine.store}/file_batches/${theirs.batch}`],
        ['GET', `/z1/vector_stores/${mine.store}/file_batches/${theirs.batch}/files`],
        ['GET', `/z1/vector_stores?after=${theirs.store}`],
        ['DELETE', vs],
      ];
      for (const [method, path, body] of routes) await notFound(method, path, h.apiKey, body);
      assert.ok(!(await h.client.vectorStores.list()).data.some((s) => s.id === theirs.store), 'not in the list');
      const kept = await theirs.client.vectorStores.retrieve(theirs.store);
      assert.equal(kept.name, 'theirs');
      assert.equal(kept.file_counts.completed, 1);
      assert.deepEqual(await filesOf(theirs), [theirs.file]);
      const found = await theirs.client.vectorStores.search(theirs.store, { query: QUESTION });
      assert.equal(found.data[0]?.file_id, theirs.file, 'still searchable by its account');
    });

    it("another account's store in responses' file_search vector_store_ids is 404 naming it, and nothing runs", async () => {
      h.upstream.reset();
      for (const ids of [[theirs.store], [mine.store, theirs.store]]) {
        const res = await h.create({
          model: 'PV-TURBO',
          input: QUESTION,
          tools: [{ type: 'file_search', vector_store_ids: ids }],
          include: ['file_search_call.results'],
        });
        assert.equal(res.status, 404, res.text);
        assert.equal(res.body.code, 'NOT_FOUND');
        assert.ok(res.text.includes(theirs.store), res.text);
        assert.doesNotMatch(res.text, /kumquat/);
      }
      assert.equal(chatRequests(h.upstream).length, 0, 'the model was not asked');
      const allowed = await h.create({
        model: 'PV-TURBO',
        input: QUESTION,
        tools: [{ type: 'file_search', vector_store_ids: [mine.store] }],
      });
      assert.equal(allowed.status, 200, allowed.text);
    });

    it("another account's store in chat's vector_store_ids is 404 naming it, and nothing runs", async () => {
      h.upstream.reset();
      const chat = (ids: string[]) =>
        call('POST', '/z1/chat/completions', h.apiKey, {
          model: 'PV-TURBO',
          user_id: 'u',
          use_rag: true,
          vector_store_ids: ids,
          messages: [{ role: 'user', content: QUESTION }],
        });
      for (const ids of [[theirs.store], [mine.store, theirs.store]]) {
        const res = await chat(ids);
        assert.equal(res.status, 404, res.text);
        assert.equal(res.body.code, 'NOT_FOUND');
        assert.ok(res.text.includes(theirs.store), res.text);
        assert.doesNotMatch(res.text, /kumquat/);
      }
      assert.equal(chatRequests(h.upstream).length, 0, 'the model was not asked');
      assert.equal((await chat([mine.store])).status, 200);
    });

    it('keys bound to an end user see only their own files and stores; the account key sees them all', async () => {
      const bound = async (userId: string) => {
        const res = await h.server.request<{ api_key: string }>('POST', `/admin/accounts/${h.accountId}/keys`, {
          admin: true,
          body: { name: userId, user_id: userId },
        });
        assert.equal(res.status, 201, res.text);
        return res.body.api_key;
      };
      const bobKey = await bound('bob');
      const aliceKey = await bound('alice');
      const bob = await own(openaiClient(h.server.url, bobKey), bobKey, 'bob');
      const alice = await own(openaiClient(h.server.url, aliceKey), aliceKey, 'alice');
      const bobFile = await bob.client.files.retrieve(bob.file);
      assert.equal(
        (bobFile as unknown as { user_id: string | null }).user_id,
        'bob',
        'a bound key uploads for its user',
      );
      const bobStore = await bob.client.vectorStores.retrieve(bob.store);
      assert.equal((bobStore as unknown as { user_id: string | null }).user_id, 'bob');

      for (const [viewer, other] of [
        [alice, bob],
        [bob, alice],
        [bob, mine],
      ] as const) {
        const { file, store, batch } = other;
        for (const [method, path] of [
          ['GET', `/z1/files/${file}`],
          ['GET', `/z1/files/${file}/content`],
          ['DELETE', `/z1/files/${file}`],
          ['GET', `/z1/vector_stores/${store}`],
          ['POST', `/z1/vector_stores/${store}/search`],
          ['GET', `/z1/vector_stores/${store}/files`],
          ['GET', `/z1/vector_stores/${store}/files/${file}/content`],
          ['GET', `/z1/vector_stores/${store}/file_batches/${batch}`],
          ['DELETE', `/z1/vector_stores/${store}`],
        ] as const) {
          await notFound(method, path, viewer.key, method === 'POST' ? { query: QUESTION } : undefined);
        }
        await notFound('POST', `/z1/vector_stores/${viewer.store}/files`, viewer.key, { file_id: file }, file);
        await notFound('POST', '/z1/vector_stores', viewer.key, { file_ids: [file] }, file);
        const ask = await call('POST', '/z1/responses', viewer.key, {
          model: 'PV-TURBO',
          input: QUESTION,
          tools: [{ type: 'file_search', vector_store_ids: [store] }],
        });
        assert.equal(ask.status, 404, ask.text);
        const chat = await call('POST', '/z1/chat/completions', viewer.key, {
          model: 'PV-TURBO',
          use_rag: true,
          vector_store_ids: [store],
          messages: [{ role: 'user', content: QUESTION }],
        });
        assert.equal(chat.status, 404, chat.text);
        assert.deepEqual(
          (await viewer.client.files.list()).data.map((f) => f.id),
          [viewer.file],
          'a bound key lists only its own files',
        );
        assert.deepEqual(
          (await viewer.client.vectorStores.list()).data.map((s) => s.id),
          [viewer.store],
          'and only its own stores',
        );
      }

      const listed = new Set((await h.client.files.list()).data.map((f) => f.id));
      for (const id of [mine.file, bob.file, alice.file]) assert.ok(listed.has(id), `the account key lists ${id}`);
      assert.equal((await h.client.vectorStores.retrieve(bob.store)).id, bob.store);
      assert.equal((await bob.client.files.retrieve(bob.file)).id, bob.file, 'nothing was deleted');
      assert.equal((await alice.client.vectorStores.retrieve(alice.store)).file_counts.completed, 1);
    });
  });
}
