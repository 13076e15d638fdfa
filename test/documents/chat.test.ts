import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type CitationBody, type DocumentBody, EMBEDDING_MODEL, filler } from '../support/documents.js';
import { type MockUpstream, startMockUpstream, systemPrompt } from '../support/mock-openai-upstream.js';
import { type Retrieval, ragBackends, startRetrieval } from '../support/qdrant.js';
import { startTestServer, type TestServer } from '../support/server.js';

const FACT = 'The secret launch code of project Zephyr is 7431-walrus.';

interface ChatBody {
  choices: Array<{ message: { content: string } }>;
  citations?: CitationBody[];
}

for (const rag of ragBackends()) {
  describe(`chat with use_rag (${rag.label})`, () => {
    let retrieval: Retrieval;
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;
    let otherKey: string;
    let doc: DocumentBody;
    let content: string;

    before(async () => {
      upstream = await startMockUpstream({ defaultText: 'The code is 7431-walrus [1].' });
      const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
      retrieval = await startRetrieval(rag);
      server = await startTestServer(rag.backend, {
        config: {
          ...retrieval.config,
          embeddingModel: EMBEDDING_MODEL,
          tiers: { free: { rpm: 10_000 }, business: { rpm: 10_000 } },
          routing: { 'PV-TURBO': [target] },
        },
      });
      ({ apiKey } = await server.createAccount('free', 1000));
      ({ apiKey: otherKey } = await server.createAccount('free', 1000));
      content = `${filler(8)}\n\n${FACT}\n\n${filler(8, 50)}`;
      const res = await server.request<DocumentBody>('POST', '/z1/rag/documents', {
        apiKey,
        body: { user_id: 'alice', title: 'Zephyr notes', content },
      });
      assert.equal(res.body.status, 'ready');
      doc = res.body;
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
      await retrieval?.stop();
    });
    beforeEach(() => upstream.reset());

    const ask = (key: string, userId: string, extra: Record<string, unknown> = {}) =>
      server.request<ChatBody>('POST', '/z1/chat/completions', {
        apiKey: key,
        body: {
          model: 'PV-TURBO',
          user_id: userId,
          use_rag: true,
          rag_k: 3,
          messages: [{ role: 'user', content: 'What is the launch code of project Zephyr?' }],
          ...extra,
        },
      });

    it('puts the planted fact in the prompt as source [1] and cites exactly where it is', async () => {
      const res = await ask(apiKey, 'alice', { skip_cache: true });
      assert.equal(res.status, 200, res.text);
      const prompt = systemPrompt(upstream);
      assert.match(prompt, /cite each source you use as \[n\]/);
      assert.match(prompt, /\[1\] Zephyr notes\n[^[]*7431-walrus/);
      const first = res.body.citations?.[0];
      assert.ok(first, 'a citation');
      assert.equal(first.index, 1);
      assert.equal(first.source, 'document');
      assert.equal(first.document_id, doc.id);
      assert.ok(first.chunk_id?.startsWith(doc.id));
      assert.equal(first.title, 'Zephyr notes');
      assert.ok(first.snippet.includes('7431-walrus'));
      assert.equal(first.page, null);
      // The span points at exactly the snippet in the uploaded text.
      assert.equal(content.slice(first.char_start, first.char_end), first.snippet);
      assert.ok(res.body.citations && res.body.citations.length <= 3);
      for (const c of res.body.citations ?? []) assert.equal(content.slice(c.char_start, c.char_end), c.snippet);
    });

    const streamEvents = async (key: string, userId: string) => {
      const res = await fetch(`${server.url}/z1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          model: 'PV-TURBO',
          user_id: userId,
          use_rag: true,
          stream: true,
          skip_cache: true,
          messages: [{ role: 'user', content: 'Zephyr launch code?' }],
        }),
      });
      assert.equal(res.status, 200);
      return (await res.text())
        .split('\n\n')
        .filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]')
        .map((e) => JSON.parse(e.slice(6)) as { choices: unknown[]; citations?: CitationBody[] });
    };

    it("sends the citations in the stream's last chunk", async () => {
      const events = await streamEvents(apiKey, 'alice');
      const last = events.at(-1);
      // Without include_usage the finish chunk is the last, and carries pvai's extras.
      assert.ok((last?.choices[0] as { finish_reason?: string } | undefined)?.finish_reason);
      assert.equal(last?.citations?.[0]?.document_id, doc.id);
      assert.ok(last?.citations?.[0]?.snippet.includes('7431-walrus'));
      assert.ok(events.slice(0, -1).every((e) => e.citations === undefined));
    });

    it('gives another user of the account and the same user_id elsewhere no trace of it, whole or streamed', async () => {
      for (const [key, userId] of [
        [apiKey, 'bob'],
        [otherKey, 'alice'],
      ] as const) {
        const res = await ask(key, userId, { skip_cache: true });
        assert.equal(res.status, 200);
        assert.deepEqual(res.body.citations, []);
        assert.doesNotMatch(systemPrompt(upstream), /walrus/);
        upstream.reset();
        const events = await streamEvents(key, userId);
        assert.ok(events.length > 1, 'a streamed answer');
        assert.ok(events.every((e) => (e.citations ?? []).length === 0));
        assert.doesNotMatch(systemPrompt(upstream), /walrus/);
      }
    });

    it('caps rag_k at the tier maximum', async () => {
      const res = await ask(apiKey, 'alice', { rag_k: 6 });
      assert.equal(res.status, 400);
      assert.equal((res.body as unknown as { code: string }).code, 'RAG_K_EXCEEDS_TIER');
    });

    it('never serves a cached answer citing a deleted document', async () => {
      const first = await ask(apiKey, 'alice');
      assert.equal(first.headers.get('x-cache'), 'MISS');
      assert.equal((await ask(apiKey, 'alice')).headers.get('x-cache'), 'HIT');
      const del = await server.request('DELETE', `/z1/rag/documents/${doc.id}?user_id=alice`, { apiKey });
      assert.equal(del.status, 200);
      const after = await ask(apiKey, 'alice');
      assert.equal(after.headers.get('x-cache'), 'MISS');
      assert.deepEqual(after.body.citations, []);
      assert.doesNotMatch(systemPrompt(upstream), /walrus/);
    });
  });
}
