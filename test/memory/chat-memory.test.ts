import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream, systemPrompt } from '../support/mock-openai-upstream.js';
import { qdrantPoints, type Retrieval, ragBackends, startRetrieval } from '../support/qdrant.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface MemoryBody {
  id: string;
  content: string;
  source: string;
  user_id: string;
}
interface ChatBody {
  memory_context: { items_retrieved: number; retrieval_time_ms: number };
}

for (const rag of ragBackends()) {
  describe(`memory in chat (${rag.label})`, () => {
    let retrieval: Retrieval;
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;
    let otherKey: string;

    before(async () => {
      retrieval = await startRetrieval(rag);
      upstream = await startMockUpstream({ defaultText: 'Noted.' });
      const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
      server = await startTestServer(rag.backend, {
        config: {
          ...retrieval.config,
          embeddingModel: EMBEDDING_MODEL,
          tiers: { free: { rpm: 10_000 } },
          routing: { 'PV-TURBO': [target] },
        },
      });
      ({ apiKey } = await server.createAccount('free', 10_000));
      ({ apiKey: otherKey } = await server.createAccount('free', 10_000));
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
      await retrieval?.stop();
    });
    beforeEach(() => upstream.reset());

    const say = (key: string, userId: string, text: string, extra: Record<string, unknown> = {}) =>
      server.request<ChatBody>('POST', '/z1/chat/completions', {
        apiKey: key,
        body: { model: 'PV-TURBO', user_id: userId, messages: [{ role: 'user', content: text }], ...extra },
      });
    const memories = async (key: string, userId: string) =>
      (await server.request<{ data: MemoryBody[] }>('GET', `/z1/memory?user_id=${userId}`, { apiKey: key })).body.data;
    /** Waits until the user's memories satisfy `done` (extraction runs after the answer). */
    const memoriesUntil = (key: string, userId: string, done: (list: MemoryBody[]) => boolean) =>
      eventually(() => memories(key, userId), done, 5000);

    it('remembers what the user said in one conversation and uses it in the next', async () => {
      const first = await say(apiKey, 'ada', 'Hi! My name is Ada Lovelace and I live in Lyon.');
      assert.equal(first.status, 200, first.text);
      const stored = await memoriesUntil(apiKey, 'ada', (l) => l.length >= 2);
      assert.deepEqual(stored.map((m) => m.content).sort(), [
        'The user lives in Lyon.',
        "The user's name is Ada Lovelace.",
      ]);
      assert.ok(stored.every((m) => m.source === 'conversation' && m.user_id === 'ada'));

      upstream.reset();
      const second = await say(apiKey, 'ada', 'Which city do I live in?', { skip_cache: true });
      assert.equal(second.status, 200);
      assert.match(systemPrompt(upstream), /The user lives in Lyon\./);
      assert.ok(second.body.memory_context.items_retrieved >= 1, JSON.stringify(second.body.memory_context));
    });

    it('lets a correction replace the old fact in retrieval and keeps the old one in its history', async () => {
      const lyon = (await memories(apiKey, 'ada')).find((m) => m.content === 'The user lives in Lyon.');
      assert.ok(lyon);
      await say(apiKey, 'ada', 'Actually, I moved to Paris last year.');
      const list = await memoriesUntil(apiKey, 'ada', (l) => l.some((m) => m.content.includes('Paris')));
      // The same memory, superseded: one memory of where the user lives.
      const home = list.find((m) => m.id === lyon.id);
      assert.equal(home?.content, 'The user moved to Paris last year.', JSON.stringify(list));
      assert.ok(!list.some((m) => m.content.includes('Lyon')));

      const history = await server.request<{
        data: Array<{ event: string; content: string; previous_content: string | null }>;
      }>('GET', `/z1/memory/${home.id}/history?user_id=ada`, { apiKey });
      assert.equal(history.status, 200);
      assert.deepEqual(
        history.body.data.map((c) => [c.event, c.content, c.previous_content]),
        [
          ['add', 'The user lives in Lyon.', null],
          ['update', 'The user moved to Paris last year.', 'The user lives in Lyon.'],
        ],
      );

      upstream.reset();
      await say(apiKey, 'ada', 'Which city do I live in?', { skip_cache: true });
      const prompt = systemPrompt(upstream);
      assert.match(prompt, /Paris/);
      assert.doesNotMatch(prompt, /Lyon/);
    });

    it('stores a repeated fact once', async () => {
      const before = await memories(apiKey, 'ada');
      await say(apiKey, 'ada', 'My name is Ada Lovelace. I live in Paris.');
      // Extraction is serial per user: once this later fact is in, the repeats were handled.
      await say(apiKey, 'ada', "I'm allergic to peanuts.");
      const after = await memoriesUntil(apiKey, 'ada', (l) => l.some((m) => m.content.includes('peanuts')));
      assert.equal(after.length, before.length + 1, JSON.stringify(after.map((m) => m.content)));
    });

    it('neither reads nor writes memory when use_memory is false', async () => {
      const res = await say(apiKey, 'ada', 'My favourite colour is green. Where do I live?', { use_memory: false });
      assert.deepEqual(res.body.memory_context, { items_retrieved: 0, retrieval_time_ms: 0 });
      assert.doesNotMatch(systemPrompt(upstream), /Paris|Ada/);
      await say(apiKey, 'ada', 'I work at Analytical Engines Ltd.');
      const list = await memoriesUntil(apiKey, 'ada', (l) => l.some((m) => m.content.includes('Analytical')));
      assert.ok(!list.some((m) => m.content.includes('colour')), JSON.stringify(list.map((m) => m.content)));
    });

    it("never shows one user's memories to another user or to the same user_id of another account", async () => {
      const [mine] = await memories(apiKey, 'ada');
      assert.ok(mine);
      for (const [key, userId] of [
        [apiKey, 'bob'],
        [otherKey, 'ada'],
      ] as const) {
        upstream.reset();
        const res = await say(key, userId, 'What is my name and where do I live?', { skip_cache: true });
        assert.equal(res.body.memory_context.items_retrieved, 0);
        assert.doesNotMatch(systemPrompt(upstream), /Ada|Paris|peanuts/);
        assert.deepEqual(await memories(key, userId), []);
        const found = await server.request<{ data: unknown[] }>('POST', '/z1/memory/search', {
          apiKey: key,
          body: { user_id: userId, query: 'Ada Lovelace Paris' },
        });
        assert.deepEqual(found.body.data, []);
        const q = `user_id=${userId}`;
        const attempts: Array<[string, string, unknown]> = [
          ['PATCH', `/z1/memory/${mine.id}?${q}`, { content: 'hijacked' }],
          ['GET', `/z1/memory/${mine.id}/history?${q}`, undefined],
          ['DELETE', `/z1/memory/${mine.id}?${q}`, undefined],
        ];
        for (const [method, path, body] of attempts) {
          const res404 = await server.request(method, path, { apiKey: key, ...(body ? { body } : {}) });
          assert.equal(res404.status, 404, `${method} ${path}`);
        }
      }
      assert.ok((await memories(apiKey, 'ada')).some((m) => m.id === mine.id && m.content === mine.content));
    });

    it('does not serve a cached answer after the user memory changed', async () => {
      const ask = () => say(apiKey, 'ada', 'What do you know about me?');
      assert.equal((await ask()).headers.get('x-cache'), 'MISS');
      assert.equal((await ask()).headers.get('x-cache'), 'HIT');
      const created = await server.request('POST', '/z1/memory', {
        apiKey,
        body: { user_id: 'ada', content: 'The user plays the cello.' },
      });
      assert.equal(created.status, 201);
      upstream.reset();
      const res = await ask();
      assert.equal(res.headers.get('x-cache'), 'MISS');
      assert.match(systemPrompt(upstream), /cello/);
    });

    it('forgets a user: no memory, history, version or index row of theirs is left', async () => {
      const res = await server.request<{ deleted: number }>('DELETE', '/z1/memory?user_id=ada', { apiKey });
      assert.equal(res.status, 200);
      assert.ok(res.body.deleted >= 4);
      assert.deepEqual(await memories(apiKey, 'ada'), []);
      const db = server.running.runtime.db;
      // The index's own rows too: memories are indexed under the account's memory kind.
      const tables = ['memories', 'memory_history', 'memory_user_versions'];
      if (!rag.qdrant) tables.push('rag_index_chunks', 'rag_index_tenants');
      for (const table of tables) {
        const rows = await db.query(`SELECT 1 FROM ${table} WHERE user_id = $1`, ['ada']);
        assert.equal(rows.length, 0, table);
      }
      if (retrieval.url) assert.equal(await qdrantPoints(retrieval.url, 'ada'), 0, 'Qdrant points');
    });
  });
}
