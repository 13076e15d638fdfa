import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { backends } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { setUpSkip } from '../support/models.js';
import { openaiClient } from '../support/openai-client.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { type EmbeddingListBody, fromFloats, norm } from './support.js';

const TEXTS = ['The cat sits on the mat.', 'A feline rests on a rug.', 'Quarterly revenue grew 12 percent.'];

/**
 * The official openai SDK (the devDependency) against pvai, unmodified: `client.embeddings.create` asks for base64
 * when the caller names no encoding (and decodes it); both encodings must give the vectors pvai computed.
 */
for (const backend of backends()) {
  describe(`the openai SDK's embeddings.create against pvai (${backend})`, {
    skip: setUpSkip([EMBEDDING_MODEL]),
  }, () => {
    let server: TestServer;
    let apiKey: string;
    const sent: unknown[] = [];
    let client: OpenAI;

    before(async () => {
      server = await startTestServer(backend, { config: { embeddingModel: EMBEDDING_MODEL } });
      ({ apiKey } = await server.createAccount('business', 1000));
      client = openaiClient(server.url, apiKey, { onRequest: (body) => sent.push(body) });
    });
    after(() => server?.close());

    const floats = async (input: string[]) =>
      (
        await server.request<EmbeddingListBody>('POST', '/z1/embeddings', {
          apiKey,
          body: { model: 'PV-EMBED', input, encoding_format: 'float' },
        })
      ).body.data.map((d) => fromFloats(d.embedding as number[]));

    it('works unmodified: the SDK asks for base64 by default and reads back the same vectors', async () => {
      sent.length = 0;
      const res = await client.embeddings.create({ model: 'PV-EMBED', input: TEXTS });
      assert.equal((sent[0] as { encoding_format?: string }).encoding_format, 'base64', 'what this SDK version sends');
      assert.equal(res.object, 'list');
      assert.equal(res.model, 'PV-EMBED');
      assert.equal(res.data.length, 3);
      const expected = await floats(TEXTS);
      for (const [i, item] of res.data.entries()) {
        assert.equal(item.index, i);
        assert.ok(Array.isArray(item.embedding), 'decoded by the SDK');
        assert.equal(item.embedding.length, 384);
        assert.deepEqual(Float32Array.from(item.embedding), expected[i]);
      }
      assert.ok(res.usage.prompt_tokens > 0 && res.usage.total_tokens === res.usage.prompt_tokens);
    });

    it('takes encoding_format float, a single string and dimensions 384 as the SDK sends them', async () => {
      const res = await client.embeddings.create({
        model: 'PV-EMBED',
        input: TEXTS[0] as string,
        encoding_format: 'float',
        dimensions: 384,
        user: 'sdk-user',
      });
      assert.equal(res.data.length, 1);
      assert.ok(Math.abs(norm(res.data[0]?.embedding ?? []) - 1) < 1e-5);
      assert.deepEqual(Float32Array.from(res.data[0]?.embedding ?? []), (await floats([TEXTS[0] as string]))[0]);
    });

    it("surfaces pvai's refusals as the SDK's errors, with OpenAI's code and param", async () => {
      const cases: Array<[OpenAI.EmbeddingCreateParams, string, string]> = [
        [{ model: 'PV-EMBED', input: 'cat', dimensions: 256 }, 'invalid_parameter', 'dimensions'],
        [{ model: 'text-embedding-3-small', input: 'cat' }, 'invalid_model', 'model'],
        [{ model: 'PV-EMBED', input: [1996, 4937] }, 'unsupported_content', 'input'],
      ];
      for (const [params, code, param] of cases) {
        const err = await client.embeddings.create(params).then(
          () => assert.fail(`${JSON.stringify(params)} was accepted`),
          (e: unknown) => e,
        );
        assert.ok(err instanceof OpenAI.BadRequestError, String(err));
        assert.equal(err.status, 400);
        assert.equal(err.code, code);
        assert.equal(err.param, param);
      }
    });
  });
}
