import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { collectCompletion } from '../../src/providers/completion-collector.js';
import { toChatHistory } from '../../src/providers/local/chat-history.js';
import { jsonSchemaToGbnf } from '../../src/providers/local/json-schema-to-gbnf.js';
import { withoutIntegerExponent } from '../../src/providers/local/local-engine.js';
import { formatProgressBar } from '../../src/providers/local/progress-bar.js';
import { toolsToCall } from '../../src/providers/local/request-plan.js';
import { SequencePool } from '../../src/providers/local/sequence-pool.js';
import { StopSequenceMatcher } from '../../src/providers/local/text-stream.js';
import { parseRetryAfter, retryDelayFor } from '../../src/providers/openai-compatible/retry-policy.js';
import { parseSseData } from '../../src/providers/openai-compatible/sse-parser.js';
import { type GenerationRequest, ProviderError, type StreamPart } from '../../src/providers/types.js';

async function* chunksOf(...chunks: string[]): AsyncGenerator<Uint8Array> {
  for (const chunk of chunks) yield new TextEncoder().encode(chunk);
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('SSE parser', () => {
  it('splits events across arbitrary chunk boundaries, CRLF, comments and multi-line data', async () => {
    const events = await collect(
      parseSseData(
        chunksOf(
          'data: {"a"',
          ':1}\n\n: keep-alive\n\nevent: x\r\ndata: line1\r\ndata: line2\r\n\r\ndata: [DO',
          'NE]\n\n',
        ),
      ),
    );
    assert.deepEqual(events, ['{"a":1}', 'line1\nline2', '[DONE]']);
  });

  it('handles a UTF-8 character split between chunks and a last event without blank line', async () => {
    const bytes = new TextEncoder().encode('data: héllo\n\ndata: end');
    const events = await collect(
      parseSseData(
        (async function* () {
          yield bytes.slice(0, 8); // cuts "é" in half
          yield bytes.slice(8);
        })(),
      ),
    );
    assert.deepEqual(events, ['héllo', 'end']);
  });
});

describe('StopSequenceMatcher', () => {
  it('holds back a partial stop and cuts at the stop', () => {
    const matcher = new StopSequenceMatcher(['END']);
    assert.deepEqual(matcher.push('abc E'), { release: 'abc ', stopped: false });
    assert.deepEqual(matcher.push('N'), { release: '', stopped: false });
    assert.deepEqual(matcher.push('D tail'), { release: '', stopped: true });
  });

  it('releases held text when the partial match fails', () => {
    const matcher = new StopSequenceMatcher(['END', '###']);
    assert.deepEqual(matcher.push('x EN'), { release: 'x ', stopped: false });
    assert.deepEqual(matcher.push('Z'), { release: 'ENZ', stopped: false });
    assert.equal(matcher.push('#').release, '');
    assert.equal(matcher.flush(), '#');
  });
});

describe('SequencePool', () => {
  it('queues up to maxQueue, then fails with busy, and hands items to waiters in order', async () => {
    const pool = new SequencePool(['only'], { maxQueue: 1, maxWaitMs: 0 });
    const signal = new AbortController().signal;
    const first = await pool.acquire(signal);
    const second = pool.acquire(signal);
    await assert.rejects(
      pool.acquire(signal),
      (err: unknown) => err instanceof ProviderError && err.kind === 'busy' && err.retryable,
    );
    first.release();
    const lease = await second;
    assert.equal(lease.item, 'only');
    lease.release();
    assert.equal(pool.available, 1);
  });

  it('removes an aborted waiter from the queue', async () => {
    const pool = new SequencePool([1], { maxQueue: 4, maxWaitMs: 0 });
    const held = await pool.acquire(new AbortController().signal);
    const controller = new AbortController();
    const waiting = pool.acquire(controller.signal);
    assert.equal(pool.queued, 1);
    controller.abort();
    await assert.rejects(waiting, { name: 'AbortError' });
    assert.equal(pool.queued, 0);
    held.release();
    assert.equal(pool.available, 1);
  });

  it('fails a waiter with busy once it has waited maxWaitMs, and leaves the queue', async () => {
    const pool = new SequencePool(['only'], { maxQueue: 4, maxWaitMs: 50 });
    const held = await pool.acquire(new AbortController().signal);
    const started = performance.now();
    const waiting = pool.acquire(new AbortController().signal);
    assert.equal(pool.queued, 1);
    await assert.rejects(waiting, (err: unknown) => {
      assert.ok(err instanceof ProviderError && err.kind === 'busy', String(err));
      assert.match(err.message, /within 50 ms/);
      assert.ok((err.retryAfterMs ?? 0) >= 1000, 'a Retry-After of at least a second');
      return true;
    });
    assert.ok(performance.now() - started >= 45, 'not before its bound');
    assert.equal(pool.queued, 0);
    held.release();
    assert.equal(pool.available, 1, 'the held item came back to the pool, not to the timed-out waiter');
  });

  it("estimates Retry-After from how long leases last and the queue ahead, over the pool's size", async () => {
    const pool = new SequencePool(['a', 'b'], { maxQueue: 2, maxWaitMs: 0 });
    const signal = new AbortController().signal;
    const first = await pool.acquire(signal);
    const second = await pool.acquire(signal);
    const short = pool.retryAfterMs();
    const queued = [pool.acquire(signal), pool.acquire(signal)];
    assert.ok(pool.retryAfterMs() > short, 'more waiting ahead: later');
    await assert.rejects(pool.acquire(signal), (err: unknown) => {
      assert.ok(err instanceof ProviderError && err.kind === 'busy');
      assert.equal(err.retryAfterMs, pool.retryAfterMs());
      return true;
    });
    first.release();
    second.release();
    for (const lease of await Promise.all(queued)) lease.release();
  });

  it('prefers the free item with the best score', async () => {
    const pool = new SequencePool(['a', 'bbb', 'cc'], { maxQueue: 1, maxWaitMs: 0 });
    const lease = await pool.acquire(new AbortController().signal, (item) => item.length);
    assert.equal(lease.item, 'bbb');
  });
});

describe('jsonSchemaToGbnf', () => {
  it('keeps supported structure, maps anyOf to oneOf, inlines refs and stops at recursion', () => {
    const schema = {
      type: 'object',
      properties: {
        unit: { enum: ['c', 'f'] },
        when: { anyOf: [{ type: 'string', format: 'date' }, { type: 'null' }] },
        node: { $ref: '#/$defs/node' },
        count: { type: 'integer', minimum: 1 },
      },
      required: ['unit'],
      $defs: { node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } } } },
    };
    assert.deepEqual(jsonSchemaToGbnf(schema), {
      type: 'object',
      additionalProperties: false,
      properties: {
        unit: { enum: ['c', 'f'] },
        when: { oneOf: [{ type: 'string', format: 'date' }, { type: 'null' }] },
        node: {
          type: 'object',
          additionalProperties: false,
          properties: { child: jsonSchemaToGbnf({}) },
        },
        count: { type: 'integer' },
      },
    });
  });

  it('reads an empty schema as any JSON, not as null', () => {
    const any = jsonSchemaToGbnf({});
    assert.ok('oneOf' in any && any.oneOf.length === 3);
  });
});

describe('chat history rendering', () => {
  it('turns tool calls and their results (tool and legacy function roles) into function calls of one model turn', () => {
    const history = toChatHistory([
      { role: 'system', content: 'be nice' },
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temp":3}' },
      { role: 'assistant', content: null, function_call: { name: 'get_time', arguments: '{}' } },
      { role: 'function', name: 'get_time', content: 'noon' },
    ]);
    assert.equal(history.length, 3); // system, user, one model turn that generation continues
    const turn = history[2];
    assert.ok(turn?.type === 'model');
    assert.deepEqual(turn.response, [
      { type: 'functionCall', name: 'get_weather', params: { city: 'Oslo' }, result: { temp: 3 } },
      { type: 'functionCall', name: 'get_time', params: {}, result: 'noon' },
    ]);
  });

  it('shows an unmatched tool result as user text and starts a fresh model turn', () => {
    const history = toChatHistory([{ role: 'tool', tool_call_id: 'nope', content: '42' }]);
    assert.deepEqual(history, [
      { type: 'user', text: 'Result of nope: 42' },
      { type: 'model', response: [] },
    ]);
  });
});

describe('tool choice', () => {
  const tools = [
    { type: 'function' as const, function: { name: 'a' } },
    { type: 'function' as const, function: { name: 'b' } },
  ];
  const base: GenerationRequest = {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    maxTokens: 5,
    temperature: 0,
    tools,
  };

  it('follows none / required / named / auto', () => {
    assert.equal(toolsToCall({ ...base, toolChoice: 'none' }), null);
    assert.deepEqual(toolsToCall({ ...base, toolChoice: 'required' }), tools);
    assert.deepEqual(toolsToCall({ ...base, toolChoice: { type: 'function', function: { name: 'b' } } }), [tools[1]]);
    assert.deepEqual(toolsToCall(base), tools); // auto after a user message: call
    const afterResult = {
      ...base,
      messages: [...base.messages, { role: 'tool' as const, tool_call_id: 'x', content: '1' }],
    };
    assert.equal(toolsToCall(afterResult), null); // auto after a tool result: answer in text
    assert.throws(() => toolsToCall({ ...base, toolChoice: { type: 'function', function: { name: 'zzz' } } }), {
      name: 'ProviderError',
    });
  });
});

describe('retry policy', () => {
  it('parses Retry-After seconds and dates', () => {
    assert.equal(parseRetryAfter('2'), 2000);
    assert.equal(parseRetryAfter(new Date(Date.now() + 3000).toUTCString(), Date.now()) !== undefined, true);
    assert.equal(parseRetryAfter('soon'), undefined);
  });

  it('backs off exponentially with jitter, honours Retry-After up to the cap, never retries 4xx or timeouts', () => {
    const policy = { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 10_000, maxRetryAfterMs: 1000 };
    const server = new ProviderError('upstream', '500', { status: 500, retryable: true });
    const delay1 = retryDelayFor(server, 1, policy) ?? -1;
    assert.ok(delay1 >= 200 && delay1 < 300, `delay ${delay1}`);
    assert.equal(retryDelayFor(server, 3, policy), undefined);
    assert.equal(
      retryDelayFor(new ProviderError('upstream', '429', { retryable: true, retryAfterMs: 500 }), 0, policy),
      500,
    );
    assert.equal(
      retryDelayFor(new ProviderError('upstream', '429', { retryable: true, retryAfterMs: 5000 }), 0, policy),
      undefined,
    );
    assert.equal(retryDelayFor(new ProviderError('bad-request', '400', { status: 400 }), 0, policy), undefined);
    assert.equal(retryDelayFor(new ProviderError('timeout', 'slow'), 0, policy), undefined);
  });
});

describe('collectCompletion', () => {
  it('reassembles tool-call fragments by index and rethrows an error part', async () => {
    const parts: StreamPart[] = [
      { type: 'tool-call-delta', index: 0, id: 'call_x', name: 'f', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"a"' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: ':1}' },
      { type: 'finish', finishReason: 'tool_calls', usage: { promptTokens: 1, completionTokens: 2 } },
    ];
    const completion = await collectCompletion(collectable(parts));
    assert.equal(completion.text, null);
    assert.deepEqual(completion.toolCalls, [
      { id: 'call_x', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
    ]);
    const failing: StreamPart[] = [
      { type: 'text-delta', text: 'x' },
      { type: 'error', error: new ProviderError('upstream', 'boom') },
    ];
    await assert.rejects(collectCompletion(collectable(failing)), { message: 'boom' });
  });
});

async function* collectable(parts: StreamPart[]): AsyncGenerator<StreamPart> {
  yield* parts;
}

describe('progress bar', () => {
  it('renders ratio and sizes', () => {
    assert.equal(
      formatProgressBar({ receivedBytes: 512, totalBytes: 1024 }, 10),
      '[#####-----]  50.0%  512 B / 1.0 KB',
    );
    assert.equal(formatProgressBar({ receivedBytes: 2048, totalBytes: null }), '2.0 KB downloaded');
  });
});

describe('JSON-schema grammars for tool arguments', () => {
  it('admit only sign and digits for integers (node-llama-cpp also allows an exponent, e.g. 5e-3)', () => {
    const rule = 'integer-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15}) ([eE] [-+]? ("0" | [1-9] [0-9]{0,15}))?';
    const other = 'root ::= "{" integer-number-rule "}"';
    const fixed = withoutIntegerExponent(`${other}\n${rule}`);
    assert.equal(fixed, `${other}\ninteger-number-rule ::= "-"? ("0" | [1-9] [0-9]{0,15})`);
    assert.equal(withoutIntegerExponent(other), other, 'grammars without integers are left alone');
  });
});
