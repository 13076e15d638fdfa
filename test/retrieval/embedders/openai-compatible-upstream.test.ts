import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { startServer } from '../../../src/server.js';
import { createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { type DocumentBody, filler, type MatchBody } from '../../support/documents.js';
import { type MockUpstream, startMockUpstream } from '../../support/mock-openai-upstream.js';
import { ADMIN_TOKEN, testServerConfig } from '../../support/server.js';

/** Embeddings from an OpenAI-compatible /embeddings endpoint (the mock upstream), over real HTTP. */
describe('OpenAI-compatible embeddings', () => {
  let upstream: MockUpstream;
  let database: TestDatabase;

  before(async () => {
    upstream = await startMockUpstream();
    database = await createTestDatabase('sqlite');
    process.env.PVAI_TEST_EMBEDDINGS_KEY = 'sk-embed';
  });
  after(async () => {
    await upstream.close();
    await database.drop();
  });

  const config = (model: string) =>
    testServerConfig(database, {
      embeddingUpstream: { baseUrl: upstream.url, model, apiKeyEnv: 'PVAI_TEST_EMBEDDINGS_KEY', batchSize: 4 },
    });

  it('embeds chunks in batches with the upstream key, in input order, and searches with them', async () => {
    const running = await startServer(config('embed-a'), { logger: pino({ level: 'silent' }) });
    try {
      const admin = { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' };
      const account = (await (
        await fetch(`${running.url}/admin/accounts`, {
          method: 'POST',
          headers: admin,
          body: JSON.stringify({ email: 'e@example.com', tier: 'business', credits: 10 }),
        })
      ).json()) as { api_key: string };
      const auth = { Authorization: `Bearer ${account.api_key}`, 'Content-Type': 'application/json' };
      upstream.reset();
      const content = `${filler(40)}\n\nThe ferry to Skye leaves from Mallaig pier.\n\n${filler(20, 9)}`;
      const res = await fetch(`${running.url}/z1/rag/documents`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ user_id: 'u', content }),
      });
      const doc = (await res.json()) as DocumentBody;
      assert.equal(res.status, 201);
      assert.equal(doc.status, 'ready');
      const calls = upstream.requests.filter((r) => r.path.endsWith('/embeddings'));
      assert.ok(calls.length >= 2, `batched: ${calls.length} requests for ${doc.chunk_count} chunks`);
      for (const call of calls) {
        assert.equal(call.headers.authorization, 'Bearer sk-embed');
        assert.equal(call.model, 'embed-a');
        assert.ok(((call.body as { input: string[] }).input.length ?? 0) <= 4);
      }
      const search = await fetch(`${running.url}/z1/rag/search`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ user_id: 'u', query: 'ferry Skye Mallaig' }),
      });
      const hits = ((await search.json()) as { data: MatchBody[] }).data;
      assert.ok(hits[0]?.snippet.includes('Mallaig'));
    } finally {
      await running.close();
    }
  });

  it('refuses to start on an index built with another embedding model, saying what to do', async () => {
    await assert.rejects(
      startServer(config('embed-b'), { logger: pino({ level: 'silent' }) }),
      /built with the embedding model openai-compatible:embed-a, but openai-compatible:embed-b is configured/,
    );
  });
});
