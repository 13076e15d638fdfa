import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { type DocumentBody, EMBEDDING_MODEL, filler, type MatchBody } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { type Retrieval, ragBackends, startRetrieval } from '../support/qdrant.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface MemoryBody {
  id: string;
  content: string;
}

/**
 * Text the embedder turns into nothing (no token: a zero-width space, control characters, a private-use
 * character, whitespace) is the user's to send. Before, MiniLM gave it a vector of 0 dimensions: a memory was
 * stored and then answered 500 (a retry made a duplicate), a PATCH answered 500 but changed the content, a
 * search for such a query was a 500 for any user with data, a chat with it as its last message too, and a
 * document with such a chunk ended INDEXING_FAILED. Now such text is stored and found by its words only.
 */
const NO_TOKENS = ['\u200b', '\u0017', '\udbc2\udced', '   '];

for (const rag of ragBackends()) {
  describe(`text with nothing the embedder reads (${rag.label})`, () => {
    let retrieval: Retrieval;
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;
    let accountId: string;

    before(async () => {
      retrieval = await startRetrieval(rag);
      upstream = await startMockUpstream({ defaultText: 'Fine.' });
      const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
      server = await startTestServer(rag.backend, {
        config: {
          ...retrieval.config,
          embeddingModel: EMBEDDING_MODEL,
          tiers: { business: { rpm: 10_000 } },
          routing: { 'PV-TURBO': [target] },
        },
      });
      ({ apiKey, accountId } = await server.createAccount('business', 10_000));
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
      await retrieval?.stop();
    });

    const memoryRows = async (userId: string) =>
      Number(
        (
          await server.running.runtime.db.query<{ n: number | string }>(
            'SELECT count(*) AS n FROM memories WHERE account_id = $1 AND user_id = $2',
            [accountId, userId],
          )
        )[0]?.n,
      );
    const searchMemories = (userId: string, query: string) =>
      server.request<{ data: MemoryBody[] }>('POST', '/z1/memory/search', {
        apiKey,
        body: { user_id: userId, query, k: 5 },
      });

    it('stores such a memory once, lists it exactly, searches with such a query, and changes a memory into one', async () => {
      const user = 'no-tokens';
      const tartu = await server.request<MemoryBody>('POST', '/z1/memory', {
        apiKey,
        body: { user_id: user, content: 'Lives in Tartu.' },
      });
      assert.equal(tartu.status, 201, tartu.text);
      for (const content of NO_TOKENS) {
        const made = await server.request<MemoryBody>('POST', '/z1/memory', {
          apiKey,
          body: { user_id: user, content },
        });
        assert.equal(made.status, 201, `${JSON.stringify(content)}: ${made.text}`);
        assert.equal(made.body.content, content);
      }
      assert.equal(await memoryRows(user), 1 + NO_TOKENS.length, 'each stored once');
      const listed = await server.request<{ data: MemoryBody[] }>('GET', `/z1/memory?user_id=${user}`, { apiKey });
      assert.deepEqual(listed.body.data.map((m) => m.content).sort(), ['Lives in Tartu.', ...NO_TOKENS].sort());

      for (const query of NO_TOKENS) {
        const found = await searchMemories(user, query);
        assert.equal(found.status, 200, `${JSON.stringify(query)}: ${found.text}`);
      }
      assert.equal((await searchMemories(user, 'where does the user live, Tartu?')).body.data[0]?.id, tartu.body.id);

      const patched = await server.request<MemoryBody>('PATCH', `/z1/memory/${tartu.body.id}?user_id=${user}`, {
        apiKey,
        body: { content: '\u200b' },
      });
      assert.equal(patched.status, 200, patched.text);
      assert.equal(patched.body.content, '\u200b');
      const after = await searchMemories(user, 'Tartu');
      assert.equal(after.status, 200);
      assert.ok(!after.body.data.some((m) => m.id === tartu.body.id), 'the index follows the change');
    });

    it('indexes a document with a chunk of control characters by its words, and it becomes ready', async () => {
      const content = `${filler(30)}\n\n${'\u0001'.repeat(2000)}\n\nThe ferry to Skye leaves from Mallaig pier.\n\n${filler(20, 7)}`;
      const made = await server.request<DocumentBody>('POST', '/z1/rag/documents', {
        apiKey,
        body: { user_id: 'doc-user', title: 'Ferries', content },
      });
      assert.equal(made.status, 201, made.text);
      const ready = await eventually(
        async () =>
          (await server.request<DocumentBody>('GET', `/z1/rag/documents/${made.body.id}?user_id=doc-user`, { apiKey }))
            .body,
        (doc) => doc.status !== 'processing',
        30_000,
      );
      assert.equal(ready.status, 'ready', JSON.stringify(ready.failure));
      assert.equal(ready.progress, 1);
      const hits = await server.request<{ data: MatchBody[] }>('POST', '/z1/rag/search', {
        apiKey,
        body: { user_id: 'doc-user', query: 'ferry to Skye from Mallaig', k: 3 },
      });
      assert.match(hits.body.data[0]?.snippet ?? '', /Mallaig pier/);
      for (const query of NO_TOKENS) {
        const res = await server.request('POST', '/z1/rag/search', { apiKey, body: { user_id: 'doc-user', query } });
        assert.equal(res.status, 200, `${JSON.stringify(query)}: ${res.text}`);
      }
    });

    it('answers a chat whose last message has no tokens, with memory and documents in play', async () => {
      // A user with vectors on both sides: a memory and a ready document.
      const memory = await server.request('POST', '/z1/memory', {
        apiKey,
        body: { user_id: 'chat-user', content: 'Likes green tea.' },
      });
      assert.equal(memory.status, 201, memory.text);
      const doc = await server.request<DocumentBody>('POST', '/z1/rag/documents', {
        apiKey,
        body: { user_id: 'chat-user', content: 'The tea room opens at noon on Sundays.' },
      });
      await eventually(
        async () =>
          (await server.request<DocumentBody>('GET', `/z1/rag/documents/${doc.body.id}?user_id=chat-user`, { apiKey }))
            .body.status,
        (status) => status === 'ready',
        30_000,
      );
      for (const content of NO_TOKENS) {
        const res = await server.request('POST', '/z1/chat/completions', {
          apiKey,
          body: {
            model: 'PV-TURBO',
            user_id: 'chat-user',
            use_rag: true,
            skip_cache: true,
            messages: [{ role: 'user', content }],
          },
        });
        assert.equal(res.status, 200, `${JSON.stringify(content)}: ${res.text}`);
      }
    });
  });
}

/** A failing embedder leaves nothing behind: memory create and change are all or nothing. */
for (const backend of backends()) {
  describe(`memory writes when the embedder fails (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;

    before(async () => {
      upstream = await startMockUpstream();
      process.env.PVAI_TEST_EMBEDDINGS_KEY = 'sk-embed';
      server = await startTestServer(backend, {
        config: {
          embeddingUpstream: { baseUrl: upstream.url, model: 'embed', apiKeyEnv: 'PVAI_TEST_EMBEDDINGS_KEY' },
          tiers: { business: { rpm: 10_000 } },
        },
      });
      ({ apiKey } = await server.createAccount('business', 100));
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });

    it('answers 503 and writes nothing; the retry makes one memory; a failed change keeps the old content', async () => {
      const kept = await server.request<MemoryBody>('POST', '/z1/memory', {
        apiKey,
        body: { user_id: 'u', content: 'Has a dog called Rex.' },
      });
      assert.equal(kept.status, 201, kept.text);

      upstream.scriptModel('embed', { kind: 'status', status: 500 });
      const failed = await server.request('POST', '/z1/memory', {
        apiKey,
        body: { user_id: 'u', content: 'Lives in Oslo.' },
      });
      assert.equal(failed.status, 503, failed.text);
      assert.equal((failed.body as { code: string }).code, 'SERVICE_UNAVAILABLE');
      assert.match((failed.body as { message: string }).message, /embedding upstream answered 500/);
      const change = await server.request('PATCH', `/z1/memory/${kept.body.id}?user_id=u`, {
        apiKey,
        body: { content: 'Has a cat called Tom.' },
      });
      assert.equal(change.status, 503, change.text);

      const list = async () =>
        (await server.request<{ data: MemoryBody[] }>('GET', '/z1/memory?user_id=u', { apiKey })).body.data.map(
          (m) => m.content,
        );
      assert.deepEqual(await list(), ['Has a dog called Rex.'], 'nothing written, nothing changed');
      const history = await server.request<{ data: unknown[] }>('GET', `/z1/memory/${kept.body.id}/history?user_id=u`, {
        apiKey,
      });
      assert.equal(history.body.data.length, 1, 'no update in its history');

      upstream.scriptModel('embed', undefined);
      const retried = await server.request('POST', '/z1/memory', {
        apiKey,
        body: { user_id: 'u', content: 'Lives in Oslo.' },
      });
      assert.equal(retried.status, 201, retried.text);
      assert.deepEqual((await list()).sort(), ['Has a dog called Rex.', 'Lives in Oslo.']);
      const found = await server.request<{ data: MemoryBody[] }>('POST', '/z1/memory/search', {
        apiKey,
        body: { user_id: 'u', query: 'dog Rex', k: 5 },
      });
      assert.equal(found.body.data[0]?.content, 'Has a dog called Rex.', 'the index still holds the old content');
    });
  });
}
