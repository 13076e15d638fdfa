import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type DocumentBody, EMBEDDING_MODEL, filler, type MatchBody } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { qdrantPoints, type Retrieval, ragBackends, startRetrieval } from '../support/qdrant.js';
import { startTestServer, type TestServer } from '../support/server.js';

const FACT = 'The secret launch code of project Zephyr is 7431-walrus.';

for (const rag of ragBackends()) {
  describe(`documents and search over HTTP (${rag.label})`, () => {
    let retrieval: Retrieval;
    let server: TestServer;
    let alice: string;
    let sameAccountOtherUser: string;
    let otherAccount: string;
    let otherKey: string;
    let docId: string;

    before(async () => {
      retrieval = await startRetrieval(rag);
      server = await startTestServer(rag.backend, {
        config: { ...retrieval.config, embeddingModel: EMBEDDING_MODEL, tiers: { business: { rpm: 10_000 } } },
      });
      ({ apiKey: alice } = await server.createAccount('business'));
      sameAccountOtherUser = alice;
      ({ apiKey: otherKey } = await server.createAccount('business'));
      otherAccount = otherKey;
    });
    after(async () => {
      await server?.close();
      await retrieval?.stop();
    });

    const search = (apiKey: string, userId: string, query: string) =>
      server.request<{ data: MatchBody[] }>('POST', '/z1/rag/search', {
        apiKey,
        body: { user_id: userId, query, k: 5 },
      });

    it('stores a small document and answers it ready, with its chunks, in the upload response', async () => {
      const content = `${filler(6)}\n\n${FACT}\n\n${filler(6, 40)}`;
      const res = await server.request<DocumentBody>('POST', '/z1/rag/documents', {
        apiKey: alice,
        body: { user_id: 'alice', title: 'Zephyr notes', content, metadata: { team: 'space' } },
      });
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.status, 'ready');
      assert.equal(res.body.progress, 1);
      assert.ok(res.body.chunk_count >= 2, `chunks: ${res.body.chunk_count}`);
      assert.equal(res.body.failure, null);
      docId = res.body.id;
      if (retrieval.url) {
        assert.equal(await qdrantPoints(retrieval.url, 'alice'), res.body.chunk_count, 'the chunks are in Qdrant');
      }
      const list = await server.request<{ data: DocumentBody[] }>('GET', '/z1/rag/documents?user_id=alice', {
        apiKey: alice,
      });
      assert.deepEqual(
        list.body.data.map((d) => d.id),
        [docId],
      );
      const got = await server.request<DocumentBody>('GET', `/z1/rag/documents/${docId}?user_id=alice`, {
        apiKey: alice,
      });
      assert.equal(got.status, 200);
      assert.equal(got.body.title, 'Zephyr notes');
    });

    it('finds the planted fact first, lexically and by meaning, with where it is', async () => {
      for (const query of ['Zephyr launch code', 'what is the secret code to start the rocket mission?']) {
        const res = await search(alice, 'alice', query);
        assert.equal(res.status, 200);
        const top = res.body.data[0];
        assert.ok(top, `nothing found for ${query}`);
        assert.ok(top.snippet.includes('7431-walrus'), `top hit for "${query}": ${top.snippet}`);
        assert.equal(top.document_id, docId);
        assert.equal(top.title, 'Zephyr notes');
        assert.equal(top.page, null);
        assert.ok(top.char_end > top.char_start);
      }
    });

    it('shows nothing of it to another user of the account or to the same user_id of another account', async () => {
      for (const [apiKey, userId] of [
        [sameAccountOtherUser, 'bob'],
        [otherAccount, 'alice'],
      ] as const) {
        assert.deepEqual((await search(apiKey, userId, 'Zephyr launch code walrus')).body.data, []);
        const list = await server.request<{ data: unknown[] }>('GET', `/z1/rag/documents?user_id=${userId}`, {
          apiKey,
        });
        assert.deepEqual(list.body.data, []);
        const get = await server.request('GET', `/z1/rag/documents/${docId}?user_id=${userId}`, { apiKey });
        assert.equal(get.status, 404);
        const del = await server.request('DELETE', `/z1/rag/documents/${docId}?user_id=${userId}`, { apiKey });
        assert.equal(del.status, 404);
      }
      // …and the owner still has it.
      assert.equal((await search(alice, 'alice', 'walrus')).body.data[0]?.document_id, docId);
    });

    it('deletes the document and its chunks: search no longer finds it', async () => {
      const del = await server.request('DELETE', `/z1/rag/documents/${docId}?user_id=alice`, { apiKey: alice });
      assert.equal(del.status, 200);
      assert.deepEqual((await search(alice, 'alice', 'Zephyr launch code walrus')).body.data, []);
      const get = await server.request('GET', `/z1/rag/documents/${docId}?user_id=alice`, { apiKey: alice });
      assert.equal(get.status, 404);
    });
  });
}

/**
 * While a document is being embedded. The embedder here is a real OpenAI-wire server that answers each batch of
 * four chunks after 400 ms, so embedding this document takes at least 2.8 s on any machine: longer than the
 * upload's bounded wait (1.5 s). With MiniLM on an idle machine the same document was embedded in 0.9 s and the
 * test could not see the `processing` answer it is about.
 */
for (const rag of ragBackends()) {
  describe(`a document still being embedded (${rag.label})`, () => {
    let retrieval: Retrieval;
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;

    before(async () => {
      retrieval = await startRetrieval(rag);
      upstream = await startMockUpstream();
      upstream.scriptModel('embed-slow', { kind: 'slow', chunks: [], delayMs: 400 });
      server = await startTestServer(rag.backend, {
        config: {
          ...retrieval.config,
          embeddingUpstream: { baseUrl: upstream.url, model: 'embed-slow', batchSize: 4 },
          tiers: { business: { rpm: 10_000 } },
        },
      });
      ({ apiKey } = await server.createAccount('business'));
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
      await retrieval?.stop();
    });

    const search = (key: string, userId: string, query: string) =>
      server.request<{ data: MatchBody[] }>('POST', '/z1/rag/search', {
        apiKey: key,
        body: { user_id: userId, query, k: 5 },
      });

    it('answers a bigger document at once as processing, searchable lexically at once, then ready', async () => {
      const content = `${filler(120, 7)}\n\nThe lighthouse keeper's cat is named Bartholomew.\n\n${filler(60, 90)}`;
      const started = performance.now();
      const res = await server.request<DocumentBody>('POST', '/z1/rag/documents', {
        apiKey,
        body: { user_id: 'carol', content },
      });
      assert.equal(res.status, 201);
      assert.ok(performance.now() - started < 2500, 'the upload answered within the bounded wait');
      assert.equal(res.body.status, 'processing');
      assert.ok(res.body.progress >= 0.5 && res.body.progress < 1, `progress ${res.body.progress}`);
      // Among the hits, not necessarily first: while the document is half embedded, a hybrid search's
      // fusion can tie its lexical-only first with another chunk's dense first (Qdrant breaks it either way).
      const hits = (await search(apiKey, 'carol', 'Bartholomew')).body.data;
      assert.ok(
        hits.some((h) => h.snippet.includes('Bartholomew')),
        'lexically searchable before it is embedded',
      );
      const done = await eventually(
        async () =>
          (
            await server.request<DocumentBody>('GET', `/z1/rag/documents/${res.body.id}?user_id=carol`, {
              apiKey,
            })
          ).body,
        (d) => d.status === 'ready',
        60_000,
      );
      assert.equal(done.status, 'ready');
      assert.equal(done.progress, 1);
    });
  });
}

describe('document upload limits', () => {
  let server: TestServer;
  let apiKey: string;
  before(async () => {
    // No embedding model in this data dir: lexical only, which is all this needs.
    server = await startTestServer('sqlite', { config: { tiers: { business: { rpm: 10_000 } } } });
    ({ apiKey } = await server.createAccount('business'));
  });
  after(() => server.close());

  it('takes a 1.2 MB JSON document (over the 1 MiB global limit) and finds it lexically at once', async () => {
    const content = `${filler(16000)}\n\nThe vault combination is 31-17-42.\n\n`;
    assert.ok(Buffer.byteLength(content) > 1_100_000);
    const started = performance.now();
    const res = await server.request<DocumentBody>('POST', '/z1/rag/documents', {
      apiKey,
      body: { user_id: 'u', content },
    });
    const ms = performance.now() - started;
    assert.equal(res.status, 201, res.text);
    assert.ok(ms < 2000, `answered in ${Math.round(ms)} ms`);
    const hit = await server.request<{ data: MatchBody[] }>('POST', '/z1/rag/search', {
      apiKey,
      body: { user_id: 'u', query: 'vault combination' },
    });
    assert.ok(hit.body.data[0]?.snippet.includes('31-17-42'));
  });

  it('refuses a body over the route limit with 413 and keeps the 1 MiB limit elsewhere', async () => {
    const big = 'x'.repeat(1_200_000);
    const other = await server.request('POST', '/z1/rag/search', { apiKey, body: { user_id: 'u', query: big } });
    assert.equal(other.status, 413);
    const huge = await server.request<{ code: string; details: { limit_bytes: number } }>('POST', '/z1/rag/documents', {
      apiKey,
      rawBody: JSON.stringify({ user_id: 'u', content: 'y'.repeat(26_000_000) }),
    });
    assert.equal(huge.status, 413);
    assert.equal(huge.body.details.limit_bytes, 25_165_824);
  });
});
