import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { backends } from '../support/databases.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { collect, openaiClient } from '../support/openai-client.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface ErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown>;
  error: { message: string; type: string; code: string; param: string | null };
}
interface UpstreamBody {
  messages: Array<{ role: string; content: string | null }>;
  max_tokens?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  top_p?: number;
  seed?: number;
  stop?: string[];
}

/**
 * The request shapes today's OpenAI clients send (LangChain 1.x, the AI SDK, typed OpenAI messages), over real
 * HTTP to pvai in front of a real OpenAI-wire upstream, whose received body shows what pvai made of them.
 */
for (const backend of backends()) {
  describe(`OpenAI request shapes (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let apiKey: string;

    before(async () => {
      upstream = await startMockUpstream({ defaultText: 'Noted.' });
      const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'up', maxRetries: 0 };
      // PV-CODEX: a route of two targets whose windows and answer budgets differ.
      const big = { ...target, model: 'big', contextTokens: 32_768, maxTokens: 300 };
      const small = { ...target, model: 'small', contextTokens: 8192, maxTokens: 900 };
      server = await startTestServer(backend, {
        config: {
          tiers: { business: { rpm: 10_000 } },
          routing: { 'PV-TURBO': [target], 'PV-CODEX': [big, small] },
        },
      });
      ({ apiKey } = await server.createAccount('business', 10_000));
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });
    beforeEach(() => upstream.reset());

    const chat = (body: Record<string, unknown>) =>
      server.request<ErrorBody & { choices: unknown[] }>('POST', '/z1/chat/completions', {
        apiKey,
        body: { model: 'PV-TURBO', skip_cache: true, ...body },
      });
    const sent = () => upstream.requests.at(-1)?.body as UpstreamBody;

    it('reads max_completion_tokens as max_tokens, and the smaller of the two when both are given', async () => {
      const messages = [{ role: 'user', content: 'hi' }];
      assert.equal((await chat({ user_id: 'u', messages, max_completion_tokens: 7 })).status, 200);
      assert.equal(sent().max_tokens, 7);
      assert.equal((await chat({ user_id: 'u', messages, max_completion_tokens: 9, max_tokens: 30 })).status, 200);
      assert.equal(sent().max_tokens, 9);
      assert.equal((await chat({ user_id: 'u', messages, max_completion_tokens: 40, max_tokens: 12 })).status, 200);
      assert.equal(sent().max_tokens, 12);
      const over = await chat({ user_id: 'u', messages, max_completion_tokens: 5000 });
      assert.equal(over.status, 400);
      assert.equal(over.body.details.field, 'max_completion_tokens');
    });

    it('joins text parts in order, reads developer as system, and takes parts in system and assistant turns too', async () => {
      const res = await chat({
        user_id: 'u',
        messages: [
          { role: 'developer', content: [{ type: 'text', text: 'Answer briefly.' }] },
          {
            role: 'system',
            content: [
              { type: 'text', text: 'Be kind. ' },
              { type: 'text', text: 'Be exact.' },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is ' },
              { type: 'text', text: '2 + 2?' },
            ],
          },
          { role: 'assistant', content: [{ type: 'text', text: 'Four.' }] },
          { role: 'user', content: 'And 3 + 3?' },
        ],
      });
      assert.equal(res.status, 200, res.text);
      const messages = sent().messages.slice(-5);
      assert.deepEqual(
        messages.map((m) => [m.role, m.content]),
        [
          ['system', 'Answer briefly.'],
          ['system', 'Be kind. Be exact.'],
          ['user', 'What is 2 + 2?'],
          ['assistant', 'Four.'],
          ['user', 'And 3 + 3?'],
        ],
      );
    });

    it('refuses a part the models cannot read with 400 UNSUPPORTED_CONTENT naming the part and its type', async () => {
      const parts = [
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
        { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
        { type: 'file', file: { file_id: 'file-1' } },
      ];
      for (const part of parts) {
        const res = await chat({
          user_id: 'u',
          messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, part] }],
        });
        assert.equal(res.status, 400, res.text);
        assert.equal(res.body.code, 'UNSUPPORTED_CONTENT');
        assert.deepEqual(res.body.details, { field: 'messages[0].content[1]', part_type: part.type });
        assert.match(res.body.message, new RegExp(`messages\\[0\\]\\.content\\[1\\] is a part of type ${part.type}`));
        assert.equal(res.body.error.param, 'messages[0].content[1]');
      }
      const textless = await chat({ user_id: 'u', messages: [{ role: 'user', content: [{ type: 'text' }] }] });
      assert.equal(textless.status, 400);
      assert.deepEqual(textless.body.details, { field: 'messages[0].content[0].text', reason: 'is required' });
      assert.equal(upstream.requests.length, 0, 'nothing reached the model');
    });

    it('accepts the OpenAI fields clients send by default: passes on what the engines honour, refuses n > 1 and logprobs', async () => {
      const res = await chat({
        user_id: 'u',
        messages: [{ role: 'user', content: 'hi' }],
        n: 1,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        logit_bias: { '50256': -100 },
        seed: 42,
        parallel_tool_calls: true,
        store: false,
        metadata: { app: 'demo' },
        service_tier: 'auto',
        top_p: 0.9,
        stop: ['\n\n'],
        logprobs: false,
        user: 'ignored-when-user_id-is-given',
      });
      assert.equal(res.status, 200, res.text);
      const body = sent();
      assert.deepEqual(
        [body.presence_penalty, body.frequency_penalty, body.top_p, body.seed, body.stop],
        [0.5, -0.5, 0.9, 42, ['\n\n']],
      );
      const two = await chat({ user_id: 'u', messages: [{ role: 'user', content: 'hi' }], n: 2 });
      assert.equal(two.status, 400);
      assert.equal(two.body.details.field, 'n');
      const logprobs = await chat({ user_id: 'u', messages: [{ role: 'user', content: 'hi' }], logprobs: true });
      assert.equal(logprobs.status, 400);
      assert.equal(logprobs.body.details.field, 'logprobs');
    });

    it("takes OpenAI's user as the end user when user_id is absent: same isolation, same memory", async () => {
      const remembered = await server.request('POST', '/z1/memory', {
        apiKey,
        body: { user_id: 'bob', content: 'Bob keeps bees on his roof.' },
      });
      assert.equal(remembered.status, 201, remembered.text);
      const ask = async (who: Record<string, string>) => {
        const res = await chat({ ...who, messages: [{ role: 'user', content: 'What does Bob keep on his roof?' }] });
        assert.equal(res.status, 200, res.text);
        return (res.body as unknown as { memory_context: { items_retrieved: number } }).memory_context.items_retrieved;
      };
      assert.equal(await ask({ user: 'bob' }), 1, 'user names bob: his memory is used');
      assert.equal(await ask({ user: 'alice' }), 0, "another user sees none of bob's");
      assert.equal(await ask({ user_id: 'alice', user: 'bob' }), 0, 'user_id wins when both are given');
      const neither = await chat({ messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(neither.status, 400);
      assert.equal(neither.body.code, 'INVALID_PARAMETER');
      assert.equal(neither.body.details.field, 'user_id');
      assert.equal(neither.body.error.param, 'user_id');
      const control = await chat({ user: 'a\u0001b', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(control.body.code, 'INVALID_TEXT', 'user is an identifier like user_id');
    });

    it('streams through the official SDK without user_id: no empty-choices chunk unless include_usage asks', async () => {
      const client: OpenAI = openaiClient(server.url, apiKey);
      const plain = await collect(
        await client.chat.completions.create({
          model: 'PV-TURBO',
          user: 'sdk-user',
          stream: true,
          messages: [{ role: 'user', content: [{ type: 'text', text: 'Say something.' }] }],
        } as OpenAI.ChatCompletionCreateParamsStreaming),
      );
      let text = '';
      for (const chunk of plain) text += chunk.choices[0]?.delta.content ?? '';
      assert.equal(text.trim(), 'Noted.');
      assert.ok(plain.every((c) => c.choices.length === 1));
      const withUsage = await collect(
        await client.chat.completions.create({
          model: 'PV-TURBO',
          user: 'sdk-user',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'Say something.' }],
        } as OpenAI.ChatCompletionCreateParamsStreaming),
      );
      const last = withUsage.at(-1);
      assert.deepEqual(last?.choices, []);
      assert.ok((last?.usage?.total_tokens ?? 0) > 0);
      assert.equal(withUsage.filter((c) => c.choices.length === 0).length, 1, 'exactly one usage chunk, the last');
    });

    it('lists each model with its context window, answer budget and capabilities, from the route it takes', async () => {
      interface ModelBody {
        id: string;
        kind: string;
        context_window: number;
        max_output_tokens: number;
        capabilities: string[];
      }
      const list = await server.request<{ data: ModelBody[] }>('GET', '/z1/models', { apiKey });
      const codex = list.body.data.find((m) => m.id === 'PV-CODEX');
      // The smaller window (a fallback must fit the same prompt), the larger answer budget.
      assert.deepEqual(codex, {
        ...codex,
        kind: 'chat',
        context_window: 8192,
        max_output_tokens: 900,
        capabilities: ['streaming', 'tools', 'structured_output'],
      });
      for (const model of list.body.data) {
        assert.equal(model.kind, 'chat');
        assert.ok(model.context_window > 0 && model.max_output_tokens > 0, JSON.stringify(model));
      }
      const one = await server.request<ModelBody>('GET', '/z1/models/PV-CODEX', { apiKey });
      assert.equal(one.body.context_window, 8192);
    });

    it('puts the error as OpenAI clients read it into a stream that fails after it started', async () => {
      upstream.script({ kind: 'disconnect', afterChunks: 2 });
      const res = await fetch(`${server.url}/z1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          model: 'PV-TURBO',
          user_id: 'u',
          stream: true,
          skip_cache: true,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
      const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: '));
      const failure = JSON.parse(events.at(-1)?.slice(6) ?? '{}') as ErrorBody;
      assert.equal(failure.code, 'UPSTREAM_ERROR', JSON.stringify(failure));
      assert.deepEqual(failure.error, {
        message: failure.message,
        type: 'server_error',
        code: 'upstream_error',
        param: null,
      });
    });
  });
}
