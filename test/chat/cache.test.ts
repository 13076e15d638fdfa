import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { backends } from '../support/databases.js';
import { assemble, collect, openaiClient, type PvParams } from '../support/openai-client.js';
import { startTestServer, type TestServer } from '../support/server.js';

type Params = PvParams<OpenAI.ChatCompletionCreateParamsNonStreaming>;

for (const backend of backends()) {
  describe(`response cache (${backend})`, () => {
    let server: TestServer;
    let alice: { client: OpenAI; accountId: string };
    let bob: { client: OpenAI; accountId: string };

    before(async () => {
      server = await startTestServer(backend, { config: { tiers: { startup: { rpm: 10_000 } } } });
      const a = await server.createAccount('startup', 100);
      const b = await server.createAccount('startup', 100);
      alice = { client: openaiClient(server.url, a.apiKey), accountId: a.accountId };
      bob = { client: openaiClient(server.url, b.apiKey), accountId: b.accountId };
    });
    after(() => server.close());

    const balance = async (accountId: string) =>
      Number((await server.request('GET', `/admin/accounts/${accountId}`, { admin: true })).body.credits);
    const request = (overrides: Partial<Params> = {}): Params =>
      ({
        model: 'PV-STANDARD',
        user_id: 'u1',
        max_tokens: 12,
        temperature: 0.9,
        seed: 7,
        messages: [{ role: 'user', content: `cache test on ${backend}` }],
        ...overrides,
      }) as Params;

    it('misses, then hits at 0 credits with the same answer', async () => {
      const start = await balance(alice.accountId);
      const first = await alice.client.chat.completions.create(request()).withResponse();
      assert.equal(first.response.headers.get('x-cache'), 'MISS');
      assert.equal(first.response.headers.get('x-credits-charged'), '2');
      const second = await alice.client.chat.completions.create(request({ user_id: 'someone-else' })).withResponse();
      assert.equal(second.response.headers.get('x-cache'), 'HIT');
      assert.equal(second.response.headers.get('x-credits-charged'), '0');
      assert.equal(second.data.choices[0]?.message.content, first.data.choices[0]?.message.content);
      assert.notEqual(second.data.id, first.data.id, 'a hit is a new response');
      assert.equal(await balance(alice.accountId), start - 2);
      const rows = await server.usageRows<{
        cached: unknown;
        credits: number;
        completion_tokens: number;
      }>(
        "SELECT cached, credits, completion_tokens FROM usage_records WHERE account_id = $1 AND endpoint = 'createChatCompletion' ORDER BY id",
        [alice.accountId],
      );
      assert.deepEqual(
        rows.map((r) => [Boolean(r.cached), Number(r.credits), Number(r.completion_tokens) > 0]),
        [
          [false, 2, true],
          [true, 0, false],
        ],
      );
    });

    it('bypasses the cache entirely with skip_cache', async () => {
      const res = await alice.client.chat.completions.create(request({ skip_cache: true })).withResponse();
      assert.equal(res.response.headers.get('x-cache'), 'BYPASS');
      assert.equal(res.response.headers.get('x-credits-charged'), '2');
      const unique = request({ messages: [{ role: 'user', content: `bypass only ${backend}` }] });
      await alice.client.chat.completions.create({ ...unique, skip_cache: true } as Params);
      const after = await alice.client.chat.completions.create(unique).withResponse();
      assert.equal(after.response.headers.get('x-cache'), 'MISS', 'a bypassed answer is not stored');
    });

    it('keeps accounts apart: the same request from another account misses', async () => {
      const res = await bob.client.chat.completions.create(request()).withResponse();
      assert.equal(res.response.headers.get('x-cache'), 'MISS');
      assert.equal(res.response.headers.get('x-credits-charged'), '2');
    });

    it('changes the key with the sampling parameters', async () => {
      const res = await alice.client.chat.completions.create(request({ temperature: 0.1 })).withResponse();
      assert.equal(res.response.headers.get('x-cache'), 'MISS');
    });

    it('caches a streamed answer once it ended: the repeat is a hit, whole or streamed', async () => {
      const streamed = request({ messages: [{ role: 'user', content: `streamed first on ${backend}` }] });
      const first = await alice.client.chat.completions
        .create({ ...streamed, stream: true } as PvParams<OpenAI.ChatCompletionCreateParamsStreaming>)
        .withResponse();
      assert.equal(first.response.headers.get('x-cache'), 'MISS');
      const text = assemble(await collect(first.data)).text;
      const whole = await alice.client.chat.completions.create(streamed).withResponse();
      assert.equal(whole.response.headers.get('x-cache'), 'HIT');
      assert.equal(whole.data.choices[0]?.message.content, text);
      const again = await alice.client.chat.completions
        .create({ ...streamed, stream: true } as PvParams<OpenAI.ChatCompletionCreateParamsStreaming>)
        .withResponse();
      assert.equal(again.response.headers.get('x-cache'), 'HIT');
      assert.equal(assemble(await collect(again.data)).text, text);
    });

    it('replays a cached answer as a stream', async () => {
      const cached = await alice.client.chat.completions.create(request());
      const { data: stream, response } = await alice.client.chat.completions
        .create({
          ...request(),
          stream: true,
          stream_options: { include_usage: true },
        } as PvParams<OpenAI.ChatCompletionCreateParamsStreaming>)
        .withResponse();
      assert.equal(response.headers.get('x-cache'), 'HIT');
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
      const chunks = await collect(stream);
      assert.equal(assemble(chunks).text, cached.choices[0]?.message.content);
      assert.equal(chunks.at(-1)?.usage?.completion_tokens, cached.usage?.completion_tokens);
    });
  });
}
