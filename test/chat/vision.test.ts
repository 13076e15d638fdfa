import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { backends } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { collect, openaiClient, type PvParams } from '../support/openai-client.js';
import { startTestServer, type TestServer } from '../support/server.js';

type Params = PvParams<OpenAI.ChatCompletionCreateParamsNonStreaming>;
type StreamParams = PvParams<OpenAI.ChatCompletionCreateParamsStreaming>;

interface ErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown>;
  error: { param: string | null };
}
interface UpstreamBody {
  messages: Array<{ role: string; content: unknown }>;
}
interface ModelBody {
  id: string;
  capabilities: string[];
}

/** A 1×1 PNG, as clients send a picture inline. */
const PIXEL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/**
 * Images in chat: a route whose every target is declared `vision` gets a user turn's `image_url` parts as the client
 * sent them; every other route (a text-only upstream, one text-only fallback, the local engine) refuses them naming
 * the part, before anything is charged or sent. `/z1/models` says which models read images.
 */
for (const backend of backends()) {
  describe(`image input in chat (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let client: OpenAI;
    let apiKey: string;

    before(async () => {
      upstream = await startMockUpstream({ defaultText: 'A cat on a mat.' });
      const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, maxRetries: 0 };
      server = await startTestServer(backend, {
        config: {
          tiers: { business: { rpm: 10_000 } },
          embeddingModel: EMBEDDING_MODEL,
          routing: {
            'PV-TURBO': [
              { ...target, model: 'eyes', vision: true },
              { ...target, model: 'eyes-too', vision: true },
            ],
            // One text-only fallback makes the route text-only: it must take the same request.
            'PV-CODEX': [
              { ...target, model: 'eyes', vision: true },
              { ...target, model: 'blind' },
            ],
            'PV-STANDARD': [{ ...target, model: 'blind' }],
            // PV-ADVANCED: the local engine (the default route).
          },
        },
      });
      ({ apiKey } = await server.createAccount('business', 10_000));
      client = openaiClient(server.url, apiKey);
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });
    beforeEach(() => upstream.reset());

    const sent = (i = -1) => upstream.requests.at(i)?.body as UpstreamBody;
    const picture = (url: string, detail?: 'low' | 'high' | 'auto'): OpenAI.ChatCompletionContentPart => ({
      type: 'image_url',
      image_url: detail ? { url, detail } : { url },
    });
    const chat = (body: Record<string, unknown>) =>
      server.request<ErrorBody>('POST', '/z1/chat/completions', {
        apiKey,
        body: { model: 'PV-TURBO', user_id: 'u', skip_cache: true, use_memory: false, ...body },
      });

    it('passes a user turn of text and images to a vision route as sent, with the official SDK, whole or streamed', async () => {
      const parts: OpenAI.ChatCompletionContentPart[] = [
        { type: 'text', text: 'Compare these two pictures.' },
        picture('https://example.com/cat.png', 'high'),
        { type: 'text', text: ' The second one is inline.' },
        picture(PIXEL),
      ];
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        { role: 'system', content: 'Describe images briefly.' },
        { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
        { role: 'assistant', content: 'Hi! Send a picture.' },
        { role: 'user', content: parts },
      ];
      const data = await client.chat.completions.create({
        model: 'PV-TURBO',
        user_id: 'u',
        skip_cache: true,
        messages,
      } as Params);
      assert.equal(data.choices[0]?.message.content, 'A cat on a mat.');
      assert.equal(upstream.requests.length, 1);
      assert.equal(upstream.requests[0]?.model, 'eyes');
      // The turn with images stays a list of parts, in order and unchanged; a turn of text parts alone is text.
      assert.deepEqual(sent().messages.slice(-4), [
        { role: 'system', content: 'Describe images briefly.' },
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Hi! Send a picture.' },
        { role: 'user', content: parts },
      ]);

      const stream = await client.chat.completions.create({
        model: 'PV-TURBO',
        user_id: 'u',
        skip_cache: true,
        stream: true,
        messages: [{ role: 'user', content: parts }],
      } as StreamParams);
      const chunks = await collect(stream);
      assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'A cat on a mat.');
      assert.deepEqual(sent().messages.at(-1), { role: 'user', content: parts });
    });

    it('refuses an image on a route that reads text only with 400 naming the part, and sends nothing', async () => {
      const content = [{ type: 'text', text: 'What is this?' }, picture('https://example.com/cat.png')];
      for (const model of ['PV-CODEX', 'PV-STANDARD', 'PV-ADVANCED']) {
        const res = await chat({
          model,
          messages: [
            { role: 'user', content: 'Hi' },
            { role: 'user', content },
          ],
        });
        assert.equal(res.status, 400, `${model}: ${res.text}`);
        assert.equal(res.body.code, 'UNSUPPORTED_CONTENT');
        assert.deepEqual(res.body.details, { field: 'messages[1].content[1]', part_type: 'image_url' });
        assert.equal(res.body.error.param, 'messages[1].content[1]');
        assert.match(res.body.message, /messages\[1\]\.content\[1\] is a part of type image_url: .*read text only/);
        assert.match(res.body.message, /vision/, 'says which models read images');
      }
      assert.equal(upstream.requests.length, 0, 'nothing reached a model');
    });

    it('on a vision route, refuses what it still cannot read: other parts, an image outside a user turn, no url', async () => {
      const audio = await chat({
        messages: [
          {
            role: 'user',
            content: [picture(PIXEL), { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }],
          },
        ],
      });
      assert.equal(audio.status, 400, audio.text);
      assert.deepEqual(audio.body.details, { field: 'messages[0].content[1]', part_type: 'input_audio' });
      assert.match(audio.body.message, /reads text and images only/);

      const system = await chat({
        messages: [
          { role: 'system', content: [picture(PIXEL)] },
          { role: 'user', content: 'What is it?' },
        ],
      });
      assert.equal(system.status, 400, system.text);
      assert.equal(system.body.code, 'UNSUPPORTED_CONTENT');
      assert.deepEqual(system.body.details, { field: 'messages[0].content[0]', part_type: 'image_url' });
      assert.match(system.body.message, /user message only/);

      const urlless = await chat({
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { detail: 'low' } }] }],
      });
      assert.equal(urlless.status, 400, urlless.text);
      assert.equal(urlless.body.code, 'INVALID_PARAMETER');
      assert.deepEqual(urlless.body.details, { field: 'messages[0].content[0].image_url.url', reason: 'is required' });
      assert.equal(upstream.requests.length, 0);
    });

    it('never serves an answer about one image for another: the parts are in the cache key', async () => {
      const ask = (url: string) =>
        server.request('POST', '/z1/chat/completions', {
          apiKey,
          body: {
            model: 'PV-TURBO',
            user_id: 'cache-user',
            use_memory: false,
            messages: [{ role: 'user', content: [{ type: 'text', text: `What is this? ${backend}` }, picture(url)] }],
          },
        });
      upstream.script({ kind: 'answer', text: 'A cat.' }, { kind: 'answer', text: 'A dog.' });
      const cat = await ask('https://example.com/cat.png');
      const dog = await ask('https://example.com/dog.png');
      const catAgain = await ask('https://example.com/cat.png');
      assert.deepEqual(
        [cat, dog, catAgain].map((r) => [r.status, r.headers.get('x-cache')]),
        [
          [200, 'MISS'],
          [200, 'MISS'],
          [200, 'HIT'],
        ],
      );
      const answer = (r: typeof cat) =>
        (r.body as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content;
      assert.deepEqual([answer(cat), answer(dog), answer(catAgain)], ['A cat.', 'A dog.', 'A cat.']);
      assert.equal(upstream.requests.length, 2, 'the second image went to the model');
    });

    it('learns from a turn with an image its text alone', async () => {
      const res = await server.request('POST', '/z1/chat/completions', {
        apiKey,
        body: {
          model: 'PV-TURBO',
          user_id: 'ada',
          skip_cache: true,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Hi! My name is Ada Lovelace and I live in Lyon.' },
                picture(PIXEL),
                { type: 'text', text: ' This is my cat.' },
              ],
            },
          ],
        },
      });
      assert.equal(res.status, 200, res.text);
      const memories = await eventually(
        async () =>
          (
            await server.request<{ data: Array<{ content: string }> }>('GET', '/z1/memory?user_id=ada', { apiKey })
          ).body.data.map((m) => m.content),
        (list) => list.length >= 2,
        5000,
      );
      assert.ok(memories.includes('The user lives in Lyon.'), JSON.stringify(memories));
      assert.ok(memories.includes("The user's name is Ada Lovelace."), JSON.stringify(memories));
      assert.ok(!memories.some((m) => m.includes('data:') || m.includes('base64')), JSON.stringify(memories));
    });

    it('lists vision among the capabilities of a model only when every target of its route reads images', async () => {
      const list = await server.request<{ data: ModelBody[] }>('GET', '/z1/models', { apiKey });
      assert.equal(list.status, 200);
      const capabilities = Object.fromEntries(list.body.data.map((m) => [m.id, m.capabilities]));
      assert.deepEqual(capabilities['PV-TURBO'], ['streaming', 'tools', 'structured_output', 'vision']);
      for (const id of ['PV-CODEX', 'PV-STANDARD', 'PV-ADVANCED']) {
        assert.ok(!capabilities[id]?.includes('vision'), `${id}: ${capabilities[id]}`);
      }
      const one = await server.request<ModelBody>('GET', '/z1/models/PV-TURBO', { apiKey });
      assert.ok(one.body.capabilities.includes('vision'));
      const sdk = await client.models.retrieve('PV-CODEX');
      assert.ok(!(sdk as unknown as ModelBody).capabilities.includes('vision'));
    });
  });
}
