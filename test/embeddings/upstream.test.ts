import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { MOCK_EMBEDDING_DIMENSION, type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { cosine, type EmbeddingListBody, type ErrorBody, fromBase64, norm } from './support.js';

/**
 * With `embeddingUpstream` set, POST /z1/embeddings goes to that OpenAI-compatible server (here a real one on
 * loopback, answering a hashed bag of words of 64 dimensions, in reverse order, with its own `usage`): the
 * upstream's vectors, its token count, its window; pvai's bounds that need the model's tokenizer are its.
 */
for (const backend of backends()) {
  describe(`POST /z1/embeddings on an embedding upstream (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;

    before(async () => {
      upstream = await startMockUpstream();
      server = await startTestServer(backend, {
        config: { embeddingUpstream: { baseUrl: upstream.url, model: 'embed-a', contextTokens: 8192, batchSize: 2 } },
      });
      ({ apiKey } = await server.createAccount('business', 100));
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });
    beforeEach(() => upstream.reset());

    const embed = (input: unknown, extra: Record<string, unknown> = {}) =>
      server.request<EmbeddingListBody & ErrorBody>('POST', '/z1/embeddings', {
        apiKey,
        body: { model: 'PV-EMBED', input, encoding_format: 'base64', ...extra },
      });
    const balance = async () =>
      (await server.request<{ credits: { balance: number } }>('GET', '/z1/usage', { apiKey })).body.credits.balance;
    const calls = () => upstream.requests.filter((r) => r.path.endsWith('/embeddings'));

    it("embeds through the upstream, in batches, in input order, and reports the upstream's usage", async () => {
      const texts = ['red apples', 'green pears', 'red apples', 'blue sky over the sea', 'green pears'];
      const res = await embed(texts);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(
        calls().map((c) => (c.body as { input: string[] }).input),
        [texts.slice(0, 2), texts.slice(2, 4), texts.slice(4)],
      );
      assert.ok(calls().every((c) => c.model === 'embed-a'));
      const vectors = res.body.data.map((d) => fromBase64(d.embedding as string));
      for (const vector of vectors) {
        assert.equal(vector.length, MOCK_EMBEDDING_DIMENSION);
        assert.ok(Math.abs(norm(vector) - 1) < 1e-5, 'normalised');
      }
      // The mock answers each batch in reverse: the same text at two places has the same vector at both.
      assert.deepEqual(vectors[2], vectors[0]);
      assert.deepEqual(vectors[4], vectors[1]);
      assert.ok(cosine(vectors[0] as Float32Array, vectors[1] as Float32Array) < 0.5);
      // The mock counts one token a text: its count, not pvai's estimate (27 characters / 4).
      assert.equal(res.body.usage.prompt_tokens, texts.length);
    });

    it('leaves the window to the upstream and prices by the estimate of one token per 4 characters', async () => {
      const before = await balance();
      // 40,004 characters: past MiniLM's window, not this upstream's; 10,001 estimated tokens, so 2 credits.
      const long = Array.from({ length: 4 }, () => 'x'.repeat(10_001));
      const res = await embed(long);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('x-credits-charged'), '2');
      assert.equal(await balance(), before - 2);
    });

    it('lists PV-EMBED with the upstream dimension and the configured window', async () => {
      const model = await server.request<{ kind: string; dimensions: number; context_window: number }>(
        'GET',
        '/z1/models/PV-EMBED',
        { apiKey },
      );
      assert.equal(model.status, 200);
      assert.equal(model.body.kind, 'embedding');
      assert.equal(model.body.dimensions, MOCK_EMBEDDING_DIMENSION);
      assert.equal(model.body.context_window, 8192);
      const wrong = await embed('apples', { dimensions: 384 });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.body.details.dimensions, MOCK_EMBEDDING_DIMENSION);
    });

    it('answers 503 when the upstream fails, and gives the credits back', async () => {
      const before = await balance();
      upstream.scriptModel('embed-a', { kind: 'status', status: 500 });
      try {
        const res = await embed(['apples', 'pears']);
        assert.equal(res.status, 503, res.text);
        assert.equal(res.body.code, 'SERVICE_UNAVAILABLE');
        assert.match(res.body.message, /embedding upstream answered 500/);
      } finally {
        upstream.scriptModel('embed-a', undefined);
      }
      assert.equal(await balance(), before);
    });
  });
}
