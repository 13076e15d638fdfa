import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Extraction, FactExtractor } from '../../src/memory/index.js';
import { backends } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface MemoryBody {
  id: string;
  content: string;
  source: string;
  metadata: Record<string, unknown>;
  score?: number;
}

for (const backend of backends()) {
  describe(`memory API (${backend})`, () => {
    let server: TestServer;
    let apiKey: string;

    before(async () => {
      server = await startTestServer(backend, {
        config: { embeddingModel: EMBEDDING_MODEL, tiers: { free: { rpm: 10_000 } } },
      });
      ({ apiKey } = await server.createAccount('free', 100));
    });
    after(() => server.close());

    const create = (userId: string, content: string, metadata?: Record<string, unknown>) =>
      server.request<MemoryBody>('POST', '/z1/memory', {
        apiKey,
        body: { user_id: userId, content, ...(metadata ? { metadata } : {}) },
      });
    const search = async (userId: string, query: string) =>
      (
        await server.request<{ data: MemoryBody[] }>('POST', '/z1/memory/search', {
          apiKey,
          body: { user_id: userId, query, k: 3 },
        })
      ).body.data;

    it('creates, lists, searches, changes and deletes a memory, keeping its history', async () => {
      const made = await create('u1', 'Prefers answers in French.', { origin: 'settings' });
      assert.equal(made.status, 201, made.text);
      assert.equal(made.body.source, 'api');
      assert.deepEqual(made.body.metadata, { origin: 'settings' });
      await create('u1', 'Has a dog called Rex.');

      const list = await server.request<{ data: MemoryBody[] }>('GET', '/z1/memory?user_id=u1', { apiKey });
      assert.equal(list.body.data.length, 2);
      assert.equal((await search('u1', 'which language should answers use'))[0]?.id, made.body.id);

      const id = made.body.id;
      const patched = await server.request<MemoryBody>('PATCH', `/z1/memory/${id}?user_id=u1`, {
        apiKey,
        body: { content: 'Prefers answers in German.' },
      });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.content, 'Prefers answers in German.');
      assert.deepEqual(patched.body.metadata, { origin: 'settings' });
      // The index follows the change: the new words find it, the old ones no longer do.
      assert.equal((await search('u1', 'German'))[0]?.id, id);
      assert.ok(!(await search('u1', 'French')).some((m) => m.id === id && m.content.includes('French')));

      const deleted = await server.request('DELETE', `/z1/memory/${id}?user_id=u1`, { apiKey });
      assert.equal(deleted.status, 200);
      assert.equal((await server.request('DELETE', `/z1/memory/${id}?user_id=u1`, { apiKey })).status, 404);
      assert.ok(!(await search('u1', 'German')).some((m) => m.id === id));

      const history = await server.request<{
        data: Array<{ event: string; content: string; previous_content: string | null }>;
      }>('GET', `/z1/memory/${id}/history?user_id=u1`, { apiKey });
      assert.deepEqual(
        history.body.data.map((c) => [c.event, c.content, c.previous_content]),
        [
          ['add', 'Prefers answers in French.', null],
          ['update', 'Prefers answers in German.', 'Prefers answers in French.'],
          ['delete', 'Prefers answers in German.', null],
        ],
      );
    });

    it('refuses requests without a user_id or with unknown fields, with a code', async () => {
      const noUser = await server.request('GET', '/z1/memory', { apiKey });
      assert.equal(noUser.status, 400);
      assert.equal((noUser.body as { code: string }).code, 'INVALID_PARAMETER');
      const made = await create('u2', 'Likes tea.');
      const noUserPatch = await server.request('PATCH', `/z1/memory/${made.body.id}`, {
        apiKey,
        body: { content: 'x' },
      });
      assert.equal(noUserPatch.status, 400);
      const extra = await server.request('POST', '/z1/memory', { apiKey, body: { user_id: 'u2', content: 'x', y: 1 } });
      assert.equal(extra.status, 400);
      const empty = await server.request('PATCH', `/z1/memory/${made.body.id}?user_id=u2`, { apiKey, body: {} });
      assert.equal(empty.status, 400);
    });

    it('forgets one user and leaves the others', async () => {
      await create('keep', 'Keeps bees.');
      await create('gone', 'Collects stamps.');
      await create('gone', 'Speaks Welsh.');
      const res = await server.request<{ deleted: number }>('DELETE', '/z1/memory?user_id=gone', { apiKey });
      assert.equal(res.body.deleted, 2);
      assert.deepEqual(await search('gone', 'stamps Welsh'), []);
      assert.equal((await search('keep', 'bees'))[0]?.content, 'Keeps bees.');
    });
  });
}

/** Extractors that fail in the two ways an extractor can: at once, or never. */
class ThrowingExtractor implements FactExtractor {
  readonly name = 'throws';
  calls = 0;
  async extract(): Promise<Extraction> {
    this.calls++;
    throw new Error('extractor exploded');
  }
}
class HangingExtractor implements FactExtractor {
  readonly name = 'hangs';
  calls = 0;
  extract(): Promise<Extraction> {
    this.calls++;
    return new Promise(() => undefined); // never settles, ignores its signal
  }
}

describe('a failing memory extractor', () => {
  let upstream: MockUpstream;
  before(async () => {
    upstream = await startMockUpstream({ defaultText: 'Fine.' });
  });
  after(() => upstream.close());

  for (const extractor of [new ThrowingExtractor(), new HangingExtractor()]) {
    it(`never fails or delays the chat (${extractor.name})`, async () => {
      const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'm', maxRetries: 0 };
      const server = await startTestServer('sqlite', {
        memoryExtractor: extractor,
        config: { routing: { 'PV-TURBO': [target] } },
      });
      try {
        const { apiKey } = await server.createAccount('free', 100);
        for (let i = 0; i < 3; i++) {
          const res = await server.request<{ choices: Array<{ message: { content: string } }> }>(
            'POST',
            '/z1/chat/completions',
            {
              apiKey,
              body: {
                model: 'PV-TURBO',
                user_id: 'u',
                skip_cache: true,
                messages: [{ role: 'user', content: `My name is Ada number ${i}.` }],
              },
            },
          );
          assert.equal(res.status, 200, res.text);
          assert.equal(res.body.choices[0]?.message.content, 'Fine.');
        }
        assert.equal(extractor.calls >= 1, true, 'the extractor was called');
      } finally {
        // close() does not wait for a hung extractor: it is abandoned with the process's abort signal.
        await server.close();
      }
    });
  }
});
