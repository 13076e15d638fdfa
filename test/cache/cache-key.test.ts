import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { cacheKeyMaterial } from '../../src/cache/cache-key.js';
import { canonicalJson } from '../../src/cache/canonical-json.js';
import { type CacheKeyInput, responseCacheKey } from '../../src/cache/index.js';

const baseRequest: CacheKeyInput = {
  model: 'llama-3.1-8b-instruct',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'What is the capital of France?' },
  ],
  temperature: 0.2,
  max_tokens: 100,
  tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
  use_rag: true,
  rag_k: 4,
};

const keyOf = (request: CacheKeyInput, account = 'account-1') => responseCacheKey(account, request);

describe('responseCacheKey', () => {
  test('is a sha256 hex digest', () => {
    assert.match(keyOf(baseRequest), /^[0-9a-f]{64}$/);
  });

  test('is deterministic', () => {
    assert.equal(keyOf(baseRequest), keyOf(structuredClone(baseRequest)));
  });

  test('differs between accounts for the same request', () => {
    assert.notEqual(keyOf(baseRequest, 'account-1'), keyOf(baseRequest, 'account-2'));
  });

  for (const [field, value] of [
    ['stream', true],
    ['stream_options', { include_usage: true }],
    ['skip_cache', true],
    ['user', 'end-user-42'],
    ['user_id', 'user-42'],
  ] as const) {
    test(`ignores ${field}`, () => {
      assert.equal(keyOf({ ...baseRequest, [field]: value }), keyOf(baseRequest));
    });
  }

  test('a streamed and a non-streamed request share a key', () => {
    assert.equal(keyOf({ ...baseRequest, stream: true }), keyOf({ ...baseRequest, stream: false }));
  });

  test('ignores fields it does not know', () => {
    const withExtra = { ...baseRequest, metadata: { trace: 'abc' } };
    assert.equal(keyOf(withExtra), keyOf(baseRequest));
  });

  const changes: [string, Partial<CacheKeyInput>][] = [
    ['model', { model: 'qwen2.5-7b-instruct' }],
    ['messages', { messages: [{ role: 'user', content: 'What is the capital of Spain?' }] }],
    ['message order', { messages: [...baseRequest.messages].reverse() }],
    ['temperature', { temperature: 0.3 }],
    ['top_p', { top_p: 0.9 }],
    ['max_tokens', { max_tokens: 101 }],
    ['seed', { seed: 7 }],
    ['stop', { stop: ['\n'] }],
    ['presence_penalty', { presence_penalty: 0.5 }],
    ['frequency_penalty', { frequency_penalty: 0.5 }],
    ['response_format', { response_format: { type: 'json_object' } }],
    ['n', { n: 2 }],
    ['tools', { tools: [] }],
    ['tool_choice', { tool_choice: 'none' }],
    ['use_rag', { use_rag: false }],
    ['rag_k', { rag_k: 8 }],
    ['use_web_search', { use_web_search: true }],
    ['a memory version', { context: { memory: 'mem-2' } }],
    ['a documents version', { context: { rag: 'docs-2' } }],
    ['a source of any name', { context: { web: 'w-1' } }],
  ];
  for (const [what, change] of changes) {
    test(`changes with ${what}`, () => {
      assert.notEqual(keyOf({ ...baseRequest, ...change }), keyOf(baseRequest));
    });
  }

  test('changes with a source version between two versions, and with which source has it', () => {
    assert.notEqual(
      keyOf({ ...baseRequest, context: { memory: 'v1' } }),
      keyOf({ ...baseRequest, context: { memory: 'v2' } }),
    );
    assert.notEqual(
      keyOf({ ...baseRequest, context: { memory: 'v1' } }),
      keyOf({ ...baseRequest, context: { rag: 'v1' } }),
    );
  });

  test('an empty context is no context', () => {
    assert.equal(keyOf({ ...baseRequest, context: {} }), keyOf(baseRequest));
  });

  test('user_id counts once a context source takes part, and not before', () => {
    assert.equal(keyOf({ ...baseRequest, user_id: 'user-1' }), keyOf({ ...baseRequest, user_id: 'user-2' }));
    for (const context of [{ memory: 'mem-1' }, { rag: 'docs-1' }, { web: 'w-1' }] as Record<string, string>[]) {
      const personal = { ...baseRequest, context };
      assert.notEqual(keyOf({ ...personal, user_id: 'user-1' }), keyOf({ ...personal, user_id: 'user-2' }));
    }
  });

  test('an explicit null counts as absent', () => {
    assert.equal(keyOf({ ...baseRequest, top_p: null, seed: null, tool_choice: null }), keyOf(baseRequest));
  });

  test('is stable across object key orderings at every depth', () => {
    const reordered: CacheKeyInput = {
      rag_k: 4,
      use_rag: true,
      tools: [{ function: { parameters: { properties: {}, type: 'object' }, name: 'lookup' }, type: 'function' }],
      max_tokens: 100,
      temperature: 0.2,
      messages: [
        { content: 'Be brief.', role: 'system' },
        { content: 'What is the capital of France?', role: 'user' },
      ],
      model: 'llama-3.1-8b-instruct',
    };
    assert.equal(keyOf(reordered), keyOf(baseRequest));
  });

  test('equals the hash of canonicalJson(material) for every shape of request', () => {
    const requests: CacheKeyInput[] = [
      baseRequest,
      { model: 'm', messages: [] },
      { ...baseRequest, temperature: null, stop: ['a', 'b'], seed: 7, logit_bias: { '10': 1, '9': -1 }, n: 2 },
      { ...baseRequest, response_format: { type: 'json_object' }, tool_choice: 'auto', parallel_tool_calls: false },
      { ...baseRequest, context: { memory: 'm1', rag: 'd1' }, user_id: 'u', use_web_search: true },
      { model: 'm', messages: [{ role: 'user', content: 'x', extra: undefined }], top_p: 0.5, top_logprobs: 3 },
      {
        model: 'm',
        messages: [],
        max_completion_tokens: 10,
        presence_penalty: 0,
        frequency_penalty: -1,
        logprobs: true,
      },
    ];
    for (const request of requests) {
      const canonical = canonicalJson(cacheKeyMaterial('acct', request));
      assert.equal(responseCacheKey('acct', request), createHash('sha256').update(canonical).digest('hex'));
    }
  });

  test('hashes the documented canonical form', () => {
    const request: CacheKeyInput = {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0,
      stream: true,
    };
    const canonical =
      '{"account":"acct","messages":[{"content":"hi","role":"user"}],"model":"m","sampling":{"temperature":0},"v":2}';
    assert.equal(responseCacheKey('acct', request), createHash('sha256').update(canonical).digest('hex'));
    const personal =
      '{"account":"acct","context":{"memory":"7","rag":"3"},"messages":[{"content":"hi","role":"user"}],' +
      '"model":"m","sampling":{"temperature":0},"user_id":"u","v":2}';
    assert.equal(
      responseCacheKey('acct', { ...request, user_id: 'u', context: { rag: '3', memory: '7' } }),
      createHash('sha256').update(personal).digest('hex'),
    );
  });
});

describe('canonicalJson', () => {
  test('sorts keys at every depth and drops undefined', () => {
    assert.equal(
      canonicalJson({ b: 1, a: { d: undefined, c: [3, { z: 1, y: 2 }] } }),
      '{"a":{"c":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  test('sorts integer-like keys as strings, unlike JS enumeration order', () => {
    assert.equal(canonicalJson({ 9: 'a', 10: 'b', x: 'c' }), '{"10":"b","9":"a","x":"c"}');
  });

  test('follows JSON.stringify for leaves and array holes', () => {
    assert.equal(canonicalJson([undefined, Number.NaN, 'é"\n', true, null]), '[null,null,"é\\"\\n",true,null]');
    assert.equal(canonicalJson(new Date(0)), '"1970-01-01T00:00:00.000Z"');
    assert.equal(canonicalJson(undefined), 'null');
  });

  test('writes values nested 100,000 levels deep without running out of stack', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? { b: deep, a: [] } : [deep, undefined];
    const text = canonicalJson(deep);
    assert.ok(text.startsWith('{"a":[],"b":[{"a":[],"b":['));
    assert.equal(text.length, 50_000 * '{"a":[],"b":'.length + 50_000 * '[,null]'.length + '"leaf"'.length + 50_000);
  });

  test('keys a chat request whose tool parameters nest 6,000 levels deep', () => {
    let parameters: Record<string, unknown> = {};
    for (let i = 0; i < 6000; i++) parameters = { type: 'object', properties: { a: parameters } };
    const request = {
      model: 'PV-TURBO',
      messages: [],
      tools: [{ type: 'function', function: { name: 'f', parameters } }],
    };
    assert.match(responseCacheKey('acct', request), /^[0-9a-f]{64}$/);
  });

  test('refuses a cycle with a TypeError, as JSON.stringify does, and accepts a value seen twice', () => {
    const shared = { x: 1 };
    assert.equal(canonicalJson({ a: shared, b: [shared, shared] }), '{"a":{"x":1},"b":[{"x":1},{"x":1}]}');
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = [cycle];
    assert.throws(() => canonicalJson(cycle), TypeError);
  });

  test('matches JSON.stringify (up to key order) on assorted values', () => {
    const values: unknown[] = [
      { z: [1, 'two', { y: null, x: [true, false] }], a: {} },
      [[[[]]], {}, [{}], 0, -0, 1e21, 'ü\u2028'],
      { toJSON: () => ({ b: 1, a: 2 }) },
      { f: () => 1, s: Symbol('s'), u: undefined, n: Number.POSITIVE_INFINITY },
    ];
    for (const value of values) {
      const sorted = (v: unknown): unknown =>
        Array.isArray(v)
          ? v.map(sorted)
          : v && typeof v === 'object'
            ? Object.fromEntries(
                Object.keys(v)
                  .sort()
                  .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
              )
            : v;
      assert.deepEqual(
        JSON.parse(canonicalJson(value)),
        JSON.parse(JSON.stringify(sorted(JSON.parse(JSON.stringify(value))))),
      );
    }
  });
});
