import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { backends } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { responsesSocketUrl, TestSocket } from '../support/websocket.js';

interface ModelBody {
  id: string;
  alias_of?: string;
  kind: string;
  credits_per_request: number;
  served_by: { kind: string; model: string };
}
interface ErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

const ALIASES = { 'gpt-4o-mini': 'PV-TURBO', 'gpt-4o': 'PV-ADVANCED', 'text-embedding-3-small': 'PV-EMBED' } as const;

/**
 * Drop-in (issue 57): the operator's model aliases (`modelAliases`), listed in `/z1/models` and taken by chat,
 * responses, compaction and embeddings as the PV model they stand for; `/v1` and `/health` served as `/z1` and
 * `/z1/health`, so the openai SDK works with its usual base URL.
 */
for (const backend of backends()) {
  describe(`model aliases and the /v1 prefix (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;

    before(async () => {
      upstream = await startMockUpstream({ defaultText: 'Paris.' });
      const target = {
        provider: 'openai-compatible' as const,
        baseUrl: upstream.url,
        model: 'turbo-up',
        maxRetries: 0,
      };
      server = await startTestServer(backend, {
        config: {
          modelAliases: ALIASES,
          routing: { 'PV-TURBO': [target] },
          embeddingUpstream: { baseUrl: upstream.url, model: 'embed-up' },
        },
      });
      ({ apiKey } = await server.createAccount('business', 1000));
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });
    beforeEach(() => upstream.reset());

    const post = <T>(path: string, body: Record<string, unknown>, key = apiKey) =>
      server.request<T & ErrorBody>('POST', path, { apiKey: key, body });

    it('lists each alias as a model of its own, the model it stands for under its id', async () => {
      const list = await server.request<{ data: ModelBody[] }>('GET', '/z1/models', { apiKey });
      const byId = new Map(list.body.data.map((m) => [m.id, m]));
      assert.deepEqual(
        list.body.data.map((m) => [m.id, m.alias_of ?? null]),
        [
          ['PV-TURBO', null],
          ['PV-STANDARD', null],
          ['PV-ADVANCED', null],
          ['PV-CODEX', null],
          ['PV-EMBED', null],
          ['gpt-4o-mini', 'PV-TURBO'],
          ['gpt-4o', 'PV-ADVANCED'],
          ['text-embedding-3-small', 'PV-EMBED'],
        ],
      );
      for (const [alias, of] of Object.entries(ALIASES)) {
        assert.deepEqual(byId.get(alias), { ...byId.get(of), id: alias, alias_of: of });
      }
      assert.equal(byId.get('gpt-4o-mini')?.served_by.model, 'turbo-up');
      const one = await server.request<ModelBody>('GET', '/z1/models/gpt-4o-mini', { apiKey });
      assert.deepEqual(one.body, byId.get('gpt-4o-mini'));
      const none = await server.request<ErrorBody>('GET', '/z1/models/gpt-5', { apiKey });
      assert.equal(none.status, 404);
    });

    it('answers chat on an alias as its PV model: routed, priced and named as it', async () => {
      const res = await post<{ model: string }>('/z1/chat/completions', {
        model: 'gpt-4o-mini',
        user_id: 'u1',
        skip_cache: true,
        messages: [{ role: 'user', content: 'Capital of France?' }],
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.model, 'PV-TURBO');
      assert.equal(res.headers.get('x-credits-charged'), '1');
      assert.equal(upstream.requests.at(-1)?.model, 'turbo-up');
    });

    it('applies the tier rules to the model an alias stands for', async () => {
      const free = await server.createAccount('free', 10);
      const res = await post('/z1/chat/completions', { model: 'gpt-4o', user_id: 'u1', messages: [] }, free.apiKey);
      assert.equal(res.status, 400, 'messages is checked by the contract first');
      const refused = await post(
        '/z1/chat/completions',
        { model: 'gpt-4o', user_id: 'u1', messages: [{ role: 'user', content: 'hi' }] },
        free.apiKey,
      );
      assert.equal(refused.status, 403, refused.text);
      assert.equal(refused.body.code, 'MODEL_NOT_ALLOWED');
      assert.equal(refused.body.details.model, 'PV-ADVANCED');
      assert.equal(upstream.requests.length, 0);
    });

    it('refuses a name that is no model or alias, or one of the other kind, with INVALID_MODEL naming the choices', async () => {
      const unknown = await post('/z1/chat/completions', {
        model: 'gpt-5',
        user_id: 'u1',
        messages: [{ role: 'user', content: 'hi' }],
      });
      assert.equal(unknown.status, 400, unknown.text);
      assert.equal(unknown.body.code, 'INVALID_MODEL');
      assert.equal(unknown.body.details.field, 'model');
      assert.match(
        unknown.body.message,
        /No model gpt-5: use one of PV-TURBO, PV-STANDARD, PV-ADVANCED, PV-CODEX, gpt-4o-mini, gpt-4o/,
      );
      const embedding = await post('/z1/chat/completions', {
        model: 'text-embedding-3-small',
        user_id: 'u1',
        messages: [{ role: 'user', content: 'hi' }],
      });
      assert.equal(embedding.body.code, 'INVALID_MODEL');
      assert.match(embedding.body.message, /text-embedding-3-small is an embedding model/);
      const chatForEmbeddings = await post('/z1/embeddings', { model: 'gpt-4o-mini', input: 'x' });
      assert.equal(chatForEmbeddings.status, 400);
      assert.match(
        chatForEmbeddings.body.message,
        /gpt-4o-mini is a chat model: use one of PV-EMBED, text-embedding-3-small/,
      );
      assert.equal(upstream.requests.length, 0);
    });

    it('takes aliases in responses, compaction and embeddings', async () => {
      const response = await post<{ model: string; status: string }>('/z1/responses', {
        model: 'gpt-4o-mini',
        input: 'Capital of France?',
        store: false,
      });
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.model, 'PV-TURBO');
      const compacted = await post<{ object: string }>('/z1/responses/compact', {
        model: 'gpt-4o-mini',
        input: [
          { role: 'user', content: 'Remember: the door code is 4312.' },
          { role: 'assistant', content: 'Noted.' },
        ],
      });
      assert.equal(compacted.status, 200, compacted.text);
      const embedded = await post<{ model: string; data: unknown[] }>('/z1/embeddings', {
        model: 'text-embedding-3-small',
        input: ['one', 'two'],
      });
      assert.equal(embedded.status, 200, embedded.text);
      assert.equal(embedded.body.model, 'PV-EMBED');
      assert.equal(embedded.body.data.length, 2);
      assert.deepEqual(
        upstream.requests.map((r) => r.model),
        ['turbo-up', 'turbo-up', 'embed-up'],
      );
    });

    it('serves /v1 as /z1 to the openai SDK at its usual base URL: a listed id, chat, responses, embeddings', async () => {
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey, maxRetries: 0 });
      const ids = [];
      for await (const model of client.models.list()) ids.push(model.id);
      assert.ok(ids.includes('gpt-4o-mini'), ids.join());
      const completion = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        user: 'u1',
        messages: [{ role: 'user', content: 'Capital of France?' }],
      });
      assert.equal(completion.choices[0]?.message.content, 'Paris.');
      const stream = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        user: 'u1',
        stream: true,
        messages: [{ role: 'user', content: 'Capital of Italy?' }],
      });
      let streamed = '';
      for await (const chunk of stream) streamed += chunk.choices[0]?.delta?.content ?? '';
      assert.equal(streamed, 'Paris.');
      const response = await client.responses.create({ model: 'gpt-4o-mini', input: 'Capital of Spain?' });
      assert.equal(response.output_text, 'Paris.');
      const vectors = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'hello' });
      assert.equal(vectors.data.length, 1);
    });

    it("serves the Responses API's WebSocket mode at /v1/responses, taking an alias", async () => {
      const socket = await TestSocket.open(responsesSocketUrl(server.url, '/v1/responses'), {
        Authorization: `Bearer ${apiKey}`,
      });
      try {
        const events = await socket.turn({ type: 'response.create', model: 'gpt-4o-mini', input: 'Capital?' });
        const done = events.at(-1) as { type: string; response?: { model: string } };
        assert.equal(done.type, 'response.completed', JSON.stringify(events.map((e) => e.type)));
        assert.equal(done.response?.model, 'PV-TURBO');
      } finally {
        socket.ws.close();
      }
      const refused = await TestSocket.refused(responsesSocketUrl(server.url, '/v2/responses'), {
        Authorization: `Bearer ${apiKey}`,
      });
      assert.equal(refused.status, 404);
    });

    it('serves /health and /v1/health as /z1/health; only whole segments are aliases', async () => {
      const z1 = await server.request('GET', '/z1/health');
      for (const path of ['/health', '/v1/health']) {
        const res = await server.request('GET', path);
        assert.equal(res.status, 200, path);
        assert.deepEqual(res.body, z1.body);
      }
      const ready = await server.request<{ status: string }>('GET', '/health/ready');
      assert.equal(ready.body.status, 'ready');
      for (const path of ['/v10/models', '/healthz', '/v1nope']) {
        const res = await server.request<ErrorBody>('GET', path);
        assert.equal(res.status, 404, path);
      }
      const unauthenticated = await server.request<ErrorBody>('GET', '/v1/models');
      assert.equal(unauthenticated.status, 401);
    });
  });
}

describe('modelAliases in the configuration', () => {
  it('reads PVAI_MODEL_ALIASES as name=PV-MODEL pairs, over the file, and none by default', () => {
    assert.deepEqual(loadConfig({}).modelAliases, {});
    const config = loadConfig({ PVAI_MODEL_ALIASES: 'gpt-4o-mini=PV-TURBO, text-embedding-3-small = PV-EMBED' });
    assert.deepEqual(config.modelAliases, { 'gpt-4o-mini': 'PV-TURBO', 'text-embedding-3-small': 'PV-EMBED' });
  });

  it('refuses an alias of no model, an alias that is a PV id, and a name that is no model name', () => {
    assert.throws(() => loadConfig({ PVAI_MODEL_ALIASES: 'gpt-4o=PV-MEGA' }), ConfigError);
    assert.throws(() => loadConfig({ PVAI_MODEL_ALIASES: 'gpt-4o' }), ConfigError);
    assert.throws(
      () => loadConfig({}, { modelAliases: { 'PV-TURBO': 'PV-CODEX' } }),
      /an alias cannot be a PV model id itself/,
    );
    assert.throws(() => loadConfig({}, { modelAliases: { 'with space': 'PV-TURBO' } }), /modelAliases/);
  });
});
