import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backends } from '../support/databases.js';
import { type DocumentBody, EMBEDDING_MODEL } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { setUpSkip } from '../support/models.js';
import { chatBody, startTestServer, type TestServer } from '../support/server.js';
import { cosine, type EmbeddingListBody, type ErrorBody, fromBase64, fromFloats, norm, Reference } from './support.js';

const CAT = 'The cat sits on the mat.';
const FELINE = 'A feline rests on a rug.';
const REVENUE = 'Quarterly revenue grew 12 percent.';

/**
 * POST /z1/embeddings over real HTTP with the real all-MiniLM-L6-v2 (where scripts/setup put it): OpenAI's shape,
 * the vectors' meaning, the same vector as retrieval computes, and every refusal with its code and field.
 */
for (const backend of backends()) {
  describe(`POST /z1/embeddings (${backend})`, { skip: setUpSkip([EMBEDDING_MODEL]) }, () => {
    let server: TestServer;
    let apiKey: string;
    let accountId: string;
    const reference = new Reference();

    before(async () => {
      server = await startTestServer(backend, {
        config: { embeddingModel: EMBEDDING_MODEL, tiers: { free: { rpm: 10_000, rpd: 10_000 } } },
      });
      ({ apiKey, accountId } = await server.createAccount('free', 10_000));
    });
    after(async () => {
      await server?.close();
      await reference.close();
    });

    const embed = (body: Record<string, unknown>) =>
      server.request<EmbeddingListBody & ErrorBody>('POST', '/z1/embeddings', {
        apiKey,
        body: { model: 'PV-EMBED', ...body },
      });
    const vectors = (body: EmbeddingListBody) =>
      body.data.map((d) => (typeof d.embedding === 'string' ? fromBase64(d.embedding) : fromFloats(d.embedding)));

    it("answers OpenAI's list: one unit-length vector of 384 dimensions per text, in input order", async () => {
      const texts = [REVENUE, CAT, FELINE, 'Paris is the capital of France.'];
      const res = await embed({ input: texts });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.object, 'list');
      assert.equal(res.body.model, 'PV-EMBED');
      assert.deepEqual(
        res.body.data.map((d) => [d.object, d.index]),
        texts.map((_, i) => ['embedding', i]),
      );
      for (const vector of vectors(res.body)) {
        assert.equal(vector.length, 384);
        assert.ok(Math.abs(norm(vector) - 1) < 1e-5, `norm ${norm(vector)}`);
      }
      // In input order: each vector is the one its text gets alone.
      for (const [i, text] of texts.entries()) {
        const alone = await embed({ input: text });
        assert.deepEqual(vectors(alone.body)[0], vectors(res.body)[i], `input[${i}]`);
      }
    });

    it('takes a single string as one text, and base64 decodes to exactly the floats of float', async () => {
      const single = await embed({ input: CAT });
      assert.equal(single.status, 200, single.text);
      assert.equal(single.body.data.length, 1);
      assert.ok(Array.isArray(single.body.data[0]?.embedding), 'float is the default');
      const encoded = await embed({ input: [CAT], encoding_format: 'base64' });
      assert.equal(encoded.status, 200, encoded.text);
      const text = encoded.body.data[0]?.embedding;
      assert.equal(typeof text, 'string');
      assert.equal(Buffer.from(text as string, 'base64').length, 384 * 4);
      // Every JSON number reads back as the very float32 that the base64 bytes hold.
      assert.deepEqual(fromBase64(text as string), fromFloats(single.body.data[0]?.embedding as number[]));
      const explicit = await embed({ input: CAT, encoding_format: 'float' });
      assert.deepEqual(explicit.body.data[0]?.embedding, single.body.data[0]?.embedding);
    });

    it('puts similar sentences closer than unrelated ones', async () => {
      const res = await embed({ input: [CAT, FELINE, REVENUE] });
      const [cat, feline, revenue] = vectors(res.body) as [Float32Array, Float32Array, Float32Array];
      const similar = cosine(cat, feline);
      assert.ok(similar > 0.4, `cat/feline ${similar}`);
      assert.ok(similar > cosine(cat, revenue) + 0.3, `cat/feline ${similar}, cat/revenue ${cosine(cat, revenue)}`);
      assert.ok(similar > cosine(feline, revenue) + 0.3, `feline/revenue ${cosine(feline, revenue)}`);
    });

    it('gives a text the very vector that retrieval stores for it (one Embedder for both)', async () => {
      const doc = await server.request<DocumentBody>('POST', '/z1/rag/documents', {
        apiKey,
        body: { user_id: 'same-vector', content: FELINE },
      });
      assert.equal(doc.status, 201, doc.text);
      const stored = await eventually(
        () =>
          server.running.runtime.db.query<{ embedding: Buffer | Uint8Array | null }>(
            'SELECT embedding FROM rag_index_chunks WHERE account_id = $1 AND document_id = $2',
            [accountId, doc.body.id],
          ),
        (rows) => rows.length === 1 && rows[0]?.embedding != null,
        10_000,
      );
      const bytes = Buffer.from(stored[0]?.embedding as Uint8Array);
      const fromIndex = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
      const res = await embed({ input: FELINE, encoding_format: 'base64' });
      assert.deepEqual(vectors(res.body)[0], fromIndex);
    });

    it("gives a text the model reads nothing of the model's vector for the empty text, not a 500", async () => {
      const res = await embed({ input: ['\u200b', '   ', '\u0017', CAT], encoding_format: 'base64' });
      assert.equal(res.status, 200, res.text);
      const [zeroWidth, spaces, control, cat] = vectors(res.body) as Float32Array[];
      const empty = await reference.emptyText();
      for (const vector of [zeroWidth, spaces, control]) assert.deepEqual(vector, empty);
      assert.ok(Math.abs(norm(empty) - 1) < 1e-5);
      assert.notDeepEqual(cat, empty);
      assert.equal(res.body.usage.prompt_tokens, await reference.tokens(CAT), 'no tokens for the three');
    });

    it('refuses more than 2,048 texts and a text over 32,768 characters (INVALID_PARAMETER, input)', async () => {
      const many = await embed({ input: Array.from({ length: 2049 }, () => 'a') });
      assert.equal(many.status, 400, many.text);
      assert.equal(many.body.code, 'INVALID_PARAMETER');
      assert.equal(many.body.details.field, 'input');
      assert.match(many.body.message, /2048 items/);
      const long = await embed({ input: ['a', 'b'.repeat(32_769)] });
      assert.equal(long.status, 400, long.text);
      assert.equal(long.body.details.field, 'input[1]');
      const empty = await embed({ input: [] });
      assert.equal(empty.status, 400);
      assert.match(empty.body.message, /fewer than 1 items/);
    });

    it('refuses a text past the window, naming it and its token count, and cuts nothing silently', async () => {
      // "cat" is one token of MiniLM's vocabulary: n of them are n tokens.
      const long = 'cat '.repeat(600).trim();
      const tokens = await reference.tokens(long);
      assert.ok(tokens > 509);
      const res = await embed({ input: [CAT, FELINE, REVENUE, long] });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, 'INVALID_PARAMETER');
      assert.equal(res.body.details.field, 'input[3]');
      assert.equal(res.body.details.tokens, tokens);
      assert.equal(res.body.details.max_tokens, 509);
      assert.equal(res.body.error.param, 'input[3]');
      assert.match(res.body.message, new RegExp(`^input\\[3\\] is ${tokens} tokens`));
      const single = await embed({ input: long });
      assert.equal(single.body.details.field, 'input');
      // 509 tokens fit exactly.
      const fits = 'cat '.repeat(509).trim();
      assert.equal(await reference.tokens(fits), 509);
      const ok = await embed({ input: fits });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.usage.prompt_tokens, 509);
    });

    it('refuses token ids with UNSUPPORTED_CONTENT and a message that says to send text', async () => {
      for (const input of [
        [1996, 4937],
        [[1996, 4937], [2006]],
      ]) {
        const res = await embed({ input });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, 'UNSUPPORTED_CONTENT');
        assert.equal(res.body.details.field, 'input');
        assert.match(res.body.message, /send the text/);
        assert.match(res.body.message, /check_embedding_ctx_length=False/);
      }
    });

    it('refuses dimensions other than 384 and an unknown model, and takes dimensions 384 and user', async () => {
      const short = await embed({ input: CAT, dimensions: 256 });
      assert.equal(short.status, 400, short.text);
      assert.equal(short.body.code, 'INVALID_PARAMETER');
      assert.equal(short.body.details.field, 'dimensions');
      assert.equal(short.body.details.dimensions, 384);
      const same = await embed({ input: CAT, dimensions: 384, user: 'end-user-1' });
      assert.equal(same.status, 200, same.text);
      for (const model of ['text-embedding-3-small', 'PV-TURBO']) {
        const res = await embed({ input: CAT, model });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, 'INVALID_MODEL');
        assert.equal(res.body.details.field, 'model');
        assert.match(res.body.message, /PV-EMBED/);
      }
    });

    it('lists PV-EMBED in /z1/models as an embedding model, and chat refuses it as a model', async () => {
      interface ModelBody {
        id: string;
        kind: string;
        context_window: number;
        max_output_tokens: number;
        dimensions?: number;
        capabilities: string[];
        available: boolean;
        credits_per_request: number;
      }
      const list = await server.request<{ data: ModelBody[] }>('GET', '/z1/models', { apiKey });
      assert.deepEqual(
        list.body.data.map((m) => [m.id, m.kind]),
        [
          ['PV-TURBO', 'chat'],
          ['PV-STANDARD', 'chat'],
          ['PV-ADVANCED', 'chat'],
          ['PV-CODEX', 'chat'],
          ['PV-EMBED', 'embedding'],
        ],
      );
      const embedding = list.body.data.at(-1);
      assert.deepEqual(embedding, {
        ...embedding,
        context_window: 512,
        max_output_tokens: 0,
        dimensions: 384,
        capabilities: ['embeddings'],
        available: true, // on the free tier too
        credits_per_request: 1,
      });
      const one = await server.request<ModelBody>('GET', '/z1/models/PV-EMBED', { apiKey });
      assert.equal(one.status, 200);
      assert.deepEqual(one.body, embedding);
      const chat = await server.request<ErrorBody>('POST', '/z1/chat/completions', {
        apiKey,
        body: chatBody({ model: 'PV-EMBED' }),
      });
      assert.equal(chat.status, 400);
      assert.equal(chat.body.code, 'INVALID_MODEL');
    });
  });
}
