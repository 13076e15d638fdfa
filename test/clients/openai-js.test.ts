import assert from 'node:assert/strict';
import fs, { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { backends } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The README's openai (JavaScript) snippets as written: a plain `new OpenAI({baseURL, apiKey})`, OpenAI's own
 * `user` for the end user, and embeddings as the SDK asks for them by default (base64, which it decodes).
 */
const ANSWER = 'Once upon a time a fox found a key.';

for (const backend of backends()) {
  describe(`the openai JavaScript SDK as the README uses it (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let client: OpenAI;

    before(async () => {
      upstream = await startMockUpstream({ defaultText: ANSWER });
      const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'up', maxRetries: 0 };
      server = await startTestServer(backend, {
        config: {
          embeddingModel: EMBEDDING_MODEL,
          tiers: { business: { rpm: 10_000 } },
          routing: { 'PV-TURBO': [target] },
        },
      });
      const { apiKey } = await server.createAccount('business', 10_000);
      client = new OpenAI({ baseURL: `${server.url}/z1`, apiKey, maxRetries: 0 });
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });

    it('streams with `user` as the end user; without stream_options every chunk has a choice', async () => {
      const stream = await client.chat.completions.create({
        model: 'PV-TURBO',
        user: 'user-1',
        stream: true,
        messages: [{ role: 'user', content: 'Tell me a story' }],
      });
      let text = '';
      let chunks = 0;
      for await (const chunk of stream) {
        assert.ok(chunk.choices[0], `a chunk without a choice: ${JSON.stringify(chunk)}`);
        text += chunk.choices[0].delta?.content ?? '';
        chunks++;
      }
      assert.equal(text, ANSWER);
      assert.ok(chunks > 2);
    });

    it('embeddings: the default (base64, decoded by the SDK) equals encoding_format float, one vector per text', async () => {
      const input = ['The cat sat on the mat.', 'A kitten rests on the rug.', 'Taxes are due in March.'];
      const byDefault = await client.embeddings.create({ model: 'PV-EMBED', input });
      const floats = await client.embeddings.create({ model: 'PV-EMBED', input, encoding_format: 'float' });
      assert.equal(byDefault.model, 'PV-EMBED');
      assert.deepEqual(
        byDefault.data.map((d) => d.index),
        [0, 1, 2],
      );
      for (const [i, d] of byDefault.data.entries()) {
        assert.equal(d.embedding.length, 384);
        const float = floats.data[i]?.embedding ?? [];
        assert.ok(
          d.embedding.every((x, j) => Math.abs(x - (float[j] ?? Number.NaN)) < 1e-6),
          `vector ${i} differs between base64 and float`,
        );
      }
      assert.ok(byDefault.usage.prompt_tokens > 0);
    });

    it("the file_search flow as written: an uploaded file's fact is found by the store's search and cited", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'pvai-readme-'));
      const path = join(dir, 'handbook.txt');
      writeFileSync(
        path,
        'Welcome aboard.\n\nThe office opens at 8:15 on weekdays.\n\nParking is behind the building.',
      );
      try {
        const file = await client.files.create({ file: fs.createReadStream(path), purpose: 'assistants' });
        const store = await client.vectorStores.create({ name: 'Handbook' });
        const attached = await client.vectorStores.files.createAndPoll(store.id, { file_id: file.id });
        assert.equal(attached.status, 'completed');
        const results = await client.vectorStores.search(store.id, { query: 'When does the office open?' });
        const top = results.data[0];
        assert.equal(top?.file_id, file.id);
        assert.match(top?.content[0]?.text ?? '', /8:15/);
        const response = await client.responses.create({
          model: 'PV-TURBO',
          input: 'When does the office open?',
          tools: [{ type: 'file_search', vector_store_ids: [store.id] }],
        });
        const search = response.output.find((item) => item.type === 'file_search_call');
        assert.ok(search, JSON.stringify(response.output));
        const cited = response.output
          .flatMap((item) => (item.type === 'message' ? item.content : []))
          .flatMap((part) => (part.type === 'output_text' ? part.annotations : []))
          .filter((a) => a.type === 'file_citation');
        assert.deepEqual([...new Set(cited.map((a) => (a as { file_id: string }).file_id))], [file.id]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
