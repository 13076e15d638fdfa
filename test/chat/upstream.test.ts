import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { eventually } from '../support/eventually.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { assemble, collect, openaiClient, type PvParams } from '../support/openai-client.js';
import { chatBody, startTestServer, type TestServer } from '../support/server.js';

type Params = PvParams<OpenAI.ChatCompletionCreateParamsNonStreaming>;
type StreamParams = PvParams<OpenAI.ChatCompletionCreateParamsStreaming>;

/** pvai in front of a real local HTTP server speaking the OpenAI wire format. */
describe('chat completions routed to OpenAI-compatible upstreams', () => {
  let upstream: MockUpstream;
  let server: TestServer;
  let client: OpenAI;
  let apiKey: string;
  let accountId: string;

  before(async () => {
    upstream = await startMockUpstream();
    const target = (model: string) => ({
      provider: 'openai-compatible' as const,
      baseUrl: upstream.url,
      model,
      apiKeyEnv: 'PVAI_TEST_UPSTREAM_KEY',
      timeoutMs: 400,
      maxRetries: 2,
      retryBaseDelayMs: 5,
    });
    process.env.PVAI_TEST_UPSTREAM_KEY = 'sk-upstream-secret';
    server = await startTestServer('sqlite', {
      config: {
        tiers: { business: { rpm: 10_000 } },
        routing: { 'PV-TURBO': [target('primary'), target('secondary')], 'PV-CODEX': [target('only')] },
      },
    });
    ({ apiKey, accountId } = await server.createAccount('business', 1000));
    client = openaiClient(server.url, apiKey);
  });
  after(async () => {
    await server.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  const balance = async () =>
    Number((await server.request('GET', `/admin/accounts/${accountId}`, { admin: true })).body.credits);
  const lastUsageRow = async () =>
    (
      await server.usageRows<{ status: number; credits: number }>(
        'SELECT status, credits FROM usage_records WHERE account_id = $1 ORDER BY id DESC LIMIT 1',
        [accountId],
      )
    )[0];
  const params = (overrides: Partial<Params> = {}): Params =>
    ({
      model: 'PV-TURBO',
      user_id: 'u',
      skip_cache: true,
      messages: [{ role: 'user', content: 'hi' }],
      ...overrides,
    }) as Params;

  it('answers from the first target, with its usage, the upstream key and one charge', async () => {
    const before = await balance();
    const data = await client.chat.completions.create(params());
    assert.equal(data.model, 'PV-TURBO');
    assert.ok(data.choices[0]?.message.content);
    assert.deepEqual(data.usage, { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
    assert.equal(upstream.requests.length, 1);
    assert.equal(upstream.requests[0]?.model, 'primary');
    assert.equal(upstream.requests[0]?.headers.authorization, 'Bearer sk-upstream-secret');
    assert.equal(await balance(), before - 1);
    const rows = await server.usageRows<{ prompt_tokens: number; completion_tokens: number }>(
      'SELECT prompt_tokens, completion_tokens FROM usage_records WHERE account_id = $1 ORDER BY id DESC LIMIT 1',
      [accountId],
    );
    assert.deepEqual(rows[0], { prompt_tokens: 12, completion_tokens: 7 });
  });

  it('streams, passing tools through and reassembling streamed tool-call fragments', async () => {
    upstream.script({ kind: 'tool-call', name: 'lookup', argumentChunks: ['{"q', 'uery": "pv', 'ai"}'] });
    const stream = await client.chat.completions.create({
      ...params(),
      stream: true,
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
    } as StreamParams);
    const chunks = await collect(stream);
    const { toolCalls, finishReasons } = assemble(chunks);
    assert.deepEqual(
      toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]),
      [['lookup', { query: 'pvai' }]],
    );
    assert.deepEqual(finishReasons, ['tool_calls']);
    assert.equal(new Set(chunks.map((c) => c.id)).size, 1);
    const sent = upstream.requests[0]?.body as { tools?: unknown[]; stream?: boolean };
    assert.equal(sent.stream, true);
    assert.equal(sent.tools?.length, 1);
  });

  it('retries a 429 and a 500 on the same target, then succeeds, charging once', async () => {
    const before = await balance();
    upstream.script({ kind: 'status', status: 429, retryAfter: '0' }, { kind: 'status', status: 500 });
    const data = await client.chat.completions.create(params());
    assert.ok(data.choices[0]?.message.content);
    assert.deepEqual(
      upstream.requests.map((r) => [r.model, r.behaviour]),
      [
        ['primary', 'status'],
        ['primary', 'status'],
        ['primary', 'answer'],
      ],
    );
    assert.equal(await balance(), before - 1);
  });

  it('falls back to the next target when one keeps failing', async () => {
    upstream.scriptModel('primary', { kind: 'status', status: 503 });
    const data = await client.chat.completions.create(params());
    assert.ok(data.choices[0]?.message.content);
    assert.deepEqual(
      upstream.requests.map((r) => r.model),
      ['primary', 'primary', 'primary', 'secondary'],
    );
  });

  it('answers 502 UPSTREAM_ERROR when every target fails, and charges nothing', async () => {
    const before = await balance();
    upstream.scriptModel('primary', { kind: 'status', status: 500 });
    upstream.scriptModel('secondary', { kind: 'status', status: 502 });
    const res = await server.request('POST', '/z1/chat/completions', { apiKey, body: chatBody({ skip_cache: true }) });
    assert.equal(res.status, 502);
    assert.equal(res.body.code, 'UPSTREAM_ERROR');
    assert.equal(await balance(), before);
    assert.deepEqual(await lastUsageRow(), { status: 502, credits: 0 });
  });

  it('answers 504 UPSTREAM_TIMEOUT when the upstream hangs', async () => {
    const before = await balance();
    upstream.scriptModel('only', { kind: 'hang' });
    const res = await server.request('POST', '/z1/chat/completions', {
      apiKey,
      body: chatBody({ model: 'PV-CODEX', skip_cache: true }),
    });
    assert.equal(res.status, 504);
    assert.equal(res.body.code, 'UPSTREAM_TIMEOUT');
    assert.equal(await balance(), before);
  });

  it('sends an error event when the upstream drops mid-stream; a started stream is charged', async () => {
    const before = await balance();
    upstream.scriptModel('only', { kind: 'disconnect', afterChunks: 2 });
    const res = await fetch(`${server.url}/z1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(chatBody({ model: 'PV-CODEX', stream: true, skip_cache: true })),
    });
    assert.equal(res.status, 200);
    assert.ok(res.headers.get('x-ratelimit-remaining'), 'rate-limit headers on the stream response');
    const text = await res.text();
    const events = text.trim().split('\n\n');
    const last = JSON.parse(events.at(-1)?.replace(/^data: /, '') ?? '{}') as { status?: string; code?: string };
    assert.equal(last.status, 'error');
    assert.equal(last.code, 'UPSTREAM_ERROR');
    assert.ok(!text.includes('[DONE]'));
    assert.equal(await balance(), before - 3);
  });

  it('stops the upstream when the client stops reading a stream', async () => {
    upstream.scriptModel('primary', {
      kind: 'slow',
      chunks: Array.from({ length: 50 }, (_, i) => `w${i} `),
      delayMs: 20,
    });
    const controller = new AbortController();
    const stream = await client.chat.completions.create({ ...params(), stream: true } as StreamParams, {
      signal: controller.signal,
    });
    let seen = 0;
    try {
      for await (const _ of stream) if (++seen === 3) controller.abort();
    } catch {
      // aborting ends the iteration
    }
    await upstream.waitForDisconnects(1, 2000);
    assert.equal(upstream.disconnects, 1);
    assert.equal(upstream.requests[0]?.clientDisconnected, true);
    // The stream had started (and is charged), but the row says the client closed it, not 200.
    const row = await eventually(lastUsageRow, (r) => r?.status === 499);
    assert.equal(row?.status, 499);
  });

  it('records a client that leaves during a non-streamed call as 499, uncharged, and stops the upstream', async () => {
    const before = await balance();
    upstream.scriptModel('primary', { kind: 'hang' });
    const controller = new AbortController();
    const pending = fetch(`${server.url}/z1/chat/completions`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(chatBody({ skip_cache: true })),
      signal: controller.signal,
    });
    // Leave while the upstream holds the request, well before its 400 ms timeout.
    await eventually(
      async () => upstream.requests.length,
      (n) => n === 1,
    );
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    await upstream.waitForDisconnects(1, 2000);
    const row = await eventually(lastUsageRow, (r) => r?.status === 499);
    assert.deepEqual(row, { status: 499, credits: 0 });
    assert.equal(await balance(), before);
    assert.equal(upstream.requests.length, 1, 'no retry and no fallback for a client that left');
  });
});
