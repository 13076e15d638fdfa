import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chatBody, startTestServer, type TestServer } from '../support/server.js';

const weatherTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } };
const namedChoice = (name: string) => ({ type: 'function', function: { name } });

describe('request validation against the contract', () => {
  let server: TestServer;
  let apiKey: string;

  before(async () => {
    server = await startTestServer('sqlite', {
      config: { tiers: { enterprise: { rpm: 10_000, rpd: 10_000, monthly: 100_000 } }, bodyLimitBytes: 4096 },
    });
    ({ apiKey } = await server.createAccount('enterprise', 1000));
  });
  after(() => server.close());

  const cases: Array<[string, Record<string, unknown>, string, string]> = [
    ['temperature above 2', { temperature: 2.5 }, 'INVALID_PARAMETER', 'temperature'],
    ['temperature below 0', { temperature: -0.1 }, 'INVALID_PARAMETER', 'temperature'],
    ['temperature not a number', { temperature: 'hot' }, 'INVALID_PARAMETER', 'temperature'],
    ['max_tokens 0', { max_tokens: 0 }, 'INVALID_PARAMETER', 'max_tokens'],
    ['max_tokens 4097', { max_tokens: 4097 }, 'INVALID_PARAMETER', 'max_tokens'],
    ['max_tokens fractional', { max_tokens: 1.5 }, 'INVALID_PARAMETER', 'max_tokens'],
    ['rag_k 0', { rag_k: 0 }, 'INVALID_PARAMETER', 'rag_k'],
    ['rag_k 101', { rag_k: 101 }, 'INVALID_PARAMETER', 'rag_k'],
    ['unknown model', { model: 'GPT-9' }, 'INVALID_MODEL', 'model'],
    ['model of the wrong type', { model: 7 }, 'INVALID_MODEL', 'model'],
    ['no messages', { messages: [] }, 'INVALID_PARAMETER', 'messages'],
    ['messages not an array', { messages: 'hi' }, 'INVALID_PARAMETER', 'messages'],
    ['a message that is not an object', { messages: [[null, null]] }, 'INVALID_PARAMETER', 'messages[0]'],
    ['unknown role', { messages: [{ role: 'robot', content: 'x' }] }, 'INVALID_PARAMETER', 'messages[0].role'],
    [
      'tool_calls on a user message',
      { messages: [{ role: 'user', content: 'x', tool_calls: [] }] },
      'INVALID_PARAMETER',
      'messages[0].tool_calls',
    ],
    ['unknown field', { frobnicate: true }, 'INVALID_PARAMETER', 'frobnicate'],
    [
      'unknown message field',
      { messages: [{ role: 'user', content: 'x', mood: 1 }] },
      'INVALID_PARAMETER',
      'messages[0].mood',
    ],
    ['n other than 1', { n: 2 }, 'INVALID_PARAMETER', 'n'],
    ['a seed JSON numbers cannot carry exactly', { seed: 2 ** 63 }, 'INVALID_PARAMETER', 'seed'],
    ['user message without content', { messages: [{ role: 'user' }] }, 'INVALID_PARAMETER', 'messages[0].content'],
    [
      'tool message without tool_call_id',
      { messages: [{ role: 'tool', content: '{}' }] },
      'INVALID_PARAMETER',
      'messages[0].tool_call_id',
    ],
    [
      'a tool_choice naming a function that is not in tools',
      { tools: [weatherTool], tool_choice: namedChoice('get_time') },
      'INVALID_PARAMETER',
      'tool_choice.function.name',
    ],
    [
      'a tool_choice naming a function when there are no tools',
      { tool_choice: namedChoice('get_time') },
      'INVALID_PARAMETER',
      'tool_choice.function.name',
    ],
    [
      'function message without name',
      { messages: [{ role: 'function', content: '{}' }] },
      'INVALID_PARAMETER',
      'messages[0].name',
    ],
  ];

  for (const [name, overrides, code, field] of cases) {
    it(`rejects ${name} with ${code} naming ${field}`, async () => {
      const res = await server.request('POST', '/z1/chat/completions', { apiKey, body: chatBody(overrides) });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.status, 'error');
      assert.equal(res.body.code, code);
      assert.equal((res.body.details as { field: string }).field, field);
      assert.ok(res.headers.get('x-ratelimit-remaining'), 'authenticated errors carry the rate-limit headers');
    });
  }

  it('answers a tool_choice naming an unknown function the same with or without tools, charging nothing', async () => {
    const { accountId, apiKey: key } = await server.createAccount('startup', 10);
    const ask = (overrides: Record<string, unknown>) =>
      server.request('POST', '/z1/chat/completions', {
        apiKey: key,
        body: chatBody({ skip_cache: true, tool_choice: namedChoice('get_time'), ...overrides }),
      });
    const withTools = await ask({ tools: [weatherTool] });
    const withoutTools = await ask({});
    for (const res of [withTools, withoutTools]) {
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(res.body, {
        status: 'error',
        message: 'tool_choice names the function get_time, which is not in tools',
        code: 'INVALID_PARAMETER',
        details: { field: 'tool_choice.function.name', reason: 'must name one of the functions in tools' },
        error: {
          message: 'tool_choice names the function get_time, which is not in tools',
          type: 'invalid_request_error',
          code: 'invalid_parameter',
          param: 'tool_choice.function.name',
        },
      });
    }
    const account = await server.request('GET', `/admin/accounts/${accountId}`, { admin: true });
    assert.equal(account.body.credits, 10);
  });

  it('refuses tool_choice "required" with no tools (as OpenAI does) instead of answering in text, charging nothing', async () => {
    const { accountId, apiKey: key } = await server.createAccount('startup', 10);
    for (const tools of [undefined, []]) {
      const res = await server.request('POST', '/z1/chat/completions', {
        apiKey: key,
        body: chatBody({ skip_cache: true, tool_choice: 'required', ...(tools ? { tools } : {}) }),
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, 'INVALID_PARAMETER');
      assert.deepEqual(res.body.details, { field: 'tool_choice', reason: 'needs tools' });
      assert.equal((res.body.error as { param: string }).param, 'tool_choice');
    }
    const withTools = await server.request('POST', '/z1/chat/completions', {
      apiKey: key,
      body: chatBody({ skip_cache: true, tool_choice: 'required', tools: [weatherTool] }),
    });
    assert.notEqual(withTools.status, 400, 'with tools it is a request like any other');
    const account = await server.request('GET', `/admin/accounts/${accountId}`, { admin: true });
    assert.equal(account.body.credits, 10 - (withTools.status === 200 ? 1 : 0));
  });

  it('answers a multipart Content-Type with no body on a JSON route 400 (the body is required), never a 500', async () => {
    // Found by the malformed-HTTP fuzz (seed 1): schema validation was skipped for every multipart header, so
    // createMemory ran with no body and threw.
    for (const path of ['/z1/memory', '/z1/chat/completions', '/z1/conversations/conv_x/items']) {
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'multipart/form-data; boundary=x' },
      });
      const body = (await res.json()) as { code: string };
      assert.ok(res.status === 400 || res.status === 415, `${path}: ${res.status} ${JSON.stringify(body)}`);
      assert.notEqual(body.code, 'INTERNAL_ERROR', path);
    }
  });

  it('rejects a missing user_id', async () => {
    const { user_id: _, ...body } = chatBody();
    const res = await server.request('POST', '/z1/chat/completions', { apiKey, body });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body.details, { field: 'user_id', reason: 'is required' });
  });

  it('accepts the fields OpenAI clients send and answers from the local engine', async () => {
    const res = await server.request('POST', '/z1/chat/completions', {
      apiKey,
      body: chatBody({
        temperature: 0,
        max_tokens: 16,
        top_p: 1,
        seed: 42,
        stop: ['\n'],
        presence_penalty: 0,
        frequency_penalty: 0,
        n: 1,
        user: 'end-user',
        stream_options: { include_usage: true },
        response_format: { type: 'text' },
        parallel_tool_calls: false,
        tool_choice: 'auto',
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }],
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'weather?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"t":20}' },
          { role: 'function', name: 'get_weather', content: '{"t":20}' },
        ],
      }),
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.object, 'chat.completion');
  });

  it('answers malformed JSON with 400 INVALID_JSON', async () => {
    const res = await server.request('POST', '/z1/chat/completions', { apiKey, rawBody: '{"model": "PV-TURBO",' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_JSON');
  });

  it('answers a body over the limit with 413 PAYLOAD_TOO_LARGE', async () => {
    const body = chatBody({ messages: [{ role: 'user', content: 'x'.repeat(8192) }] });
    const res = await server.request('POST', '/z1/chat/completions', { apiKey, body });
    assert.equal(res.status, 413);
    assert.equal(res.body.code, 'PAYLOAD_TOO_LARGE');
  });

  it('answers a non-JSON body with 415', async () => {
    const res = await server.request('POST', '/z1/chat/completions', {
      apiKey,
      rawBody: 'model=PV-TURBO',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.status, 415);
    assert.equal(res.body.code, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers a missing body with 400', async () => {
    const res = await server.request('POST', '/z1/chat/completions', { apiKey });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'INVALID_PARAMETER');
  });

  it('answers unknown paths with 404 and wrong methods with 405, with the error body', async () => {
    const missing = await server.request('GET', '/z1/nothing-here', { apiKey });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'NOT_FOUND');
    const wrong = await server.request('DELETE', '/z1/chat/completions', { apiKey });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.body.code, 'METHOD_NOT_ALLOWED');
    assert.equal(wrong.headers.get('allow'), 'OPTIONS, POST');
    const memory = await server.request('PUT', '/z1/memory/mem_1', { apiKey });
    assert.equal(memory.headers.get('allow'), 'DELETE, OPTIONS, PATCH');
    const literal = await server.request('DELETE', '/z1/memory/search', { apiKey });
    assert.equal(literal.status, 405, 'a literal path is not a value of the template beside it');
    assert.equal(literal.headers.get('allow'), 'OPTIONS, POST');
  });

  it('validates code execution requests', async () => {
    const bad = await server.request('POST', '/z1/code/execute', { apiKey, body: { code: '', user_id: 'u' } });
    assert.equal(bad.status, 400);
    assert.equal((bad.body.details as { field: string }).field, 'code');
    const timeout = await server.request('POST', '/z1/code/execute', {
      apiKey,
      body: { code: 'print(1)', user_id: 'u', timeout: 0 },
    });
    assert.equal(timeout.status, 400);
    assert.equal((timeout.body.details as { field: string }).field, 'timeout');
  });

  it('validates query parameters', async () => {
    const res = await server.request('GET', '/z1/usage?group_by=week', { apiKey });
    assert.equal(res.status, 400);
    assert.equal((res.body.details as { field: string }).field, 'group_by');
    const date = await server.request('GET', '/z1/usage?start=yesterday', { apiKey });
    assert.equal(date.status, 400);
    assert.equal((date.body.details as { field: string }).field, 'start');
  });
});
