import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { sandboxHostSkip } from '../support/sandbox-host.js';
import {
  chatRequests,
  type OutputItem,
  type ResponsesHarness,
  startResponses,
  streamResponse,
  type UpstreamMessage,
} from './support.js';

const CODE = {
  kind: 'tool-call' as const,
  name: 'code_interpreter',
  id: 'call_ci1',
  argumentChunks: ['{"code":"print(6*7)"}'],
};
const ANSWER = { kind: 'answer' as const, text: 'The answer is 42.' };

/**
 * `code_interpreter` is pvai's sandbox: when the model calls it (the mock upstream is scripted to), the code
 * runs in bubblewrap, its output is a code_interpreter_call item and the tool's answer of the next model call.
 * Needs the sandbox's host packages (always there in CI).
 */
describe('code_interpreter runs in the sandbox between model calls', { skip: sandboxHostSkip() }, () => {
  let h: ResponsesHarness;

  before(async () => {
    h = await startResponses('sqlite', {
      config: { tiers: { business: { rpm: 10_000, codeTimeoutDefaultSeconds: 5, codeTimeoutMaxSeconds: 5 } } },
    });
  });
  after(() => h?.close());
  beforeEach(() => h.upstream.reset());

  const ask = (extra: Record<string, unknown> = {}) => ({
    model: 'PV-TURBO',
    user_id: 'alice',
    skip_cache: true,
    input: 'What is six times seven? Compute it.',
    tools: [{ type: 'code_interpreter', container: { type: 'auto' } }],
    ...extra,
  });
  /** The last assistant call and the tool's answer of the second model call. */
  const toolTurns = (): [UpstreamMessage | undefined, UpstreamMessage | undefined] => {
    const messages = chatRequests(h.upstream)[1]?.messages ?? [];
    return [messages.at(-2), messages.at(-1)];
  };

  it('the call runs: a code_interpreter_call with logs "42", the result sent to the model, the answer after it', async () => {
    h.upstream.script(CODE, ANSWER);
    const res = await h.create(ask());
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.output.map((o) => o.type),
      ['code_interpreter_call', 'message'],
    );
    const [run, message] = res.body.output as [OutputItem, OutputItem];
    assert.equal(run.status, 'completed');
    assert.equal(run.code, 'print(6*7)');
    assert.equal(run.outputs?.length, 1);
    assert.equal(run.outputs?.[0]?.type, 'logs');
    assert.equal(run.outputs?.[0]?.logs.trim(), '42');
    assert.equal(message.content?.[0]?.text, 'The answer is 42.');

    const sent = chatRequests(h.upstream);
    assert.equal(sent.length, 2);
    assert.deepEqual(
      sent[0]?.tools?.map((t) => t.function.name),
      ['code_interpreter'],
    );
    const [call, result] = toolTurns();
    assert.deepEqual(call?.tool_calls, [
      { id: 'call_ci1', type: 'function', function: { name: 'code_interpreter', arguments: '{"code":"print(6*7)"}' } },
    ]);
    assert.equal(result?.role, 'tool');
    assert.equal(result?.tool_call_id, 'call_ci1');
    assert.equal(result?.content?.trim(), '42');

    // Both model calls are the response's: their tokens and their credits (one each for PV-TURBO).
    assert.deepEqual([res.body.usage?.input_tokens, res.body.usage?.output_tokens], [24, 14]);
    assert.equal(res.headers.get('x-credits-charged'), '2');
    const rows = await h.server.usageRows<{ credits: number; prompt_tokens: number }>(
      'SELECT credits, prompt_tokens FROM usage_records WHERE request_id = $1',
      [res.headers.get('x-request-id')],
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.credits), Number(r.prompt_tokens)]),
      [[2, 24]],
    );
  });

  it('code that fails is a failed run whose traceback the model reads', async () => {
    h.upstream.script({ ...CODE, argumentChunks: ['{"code":"print(1)\\n1/0"}'] }, ANSWER);
    const res = await h.create(ask());
    assert.equal(res.status, 200, res.text);
    const run = res.body.output[0];
    assert.equal(run?.type, 'code_interpreter_call');
    assert.equal(run?.status, 'failed');
    assert.match(run?.outputs?.[0]?.logs ?? '', /^1\n[\s\S]*ZeroDivisionError/);
    assert.match(toolTurns()[1]?.content ?? '', /ZeroDivisionError/);
  });

  it('max_tool_calls bounds the runs: a call beyond it is not run and ends the response', async () => {
    h.upstream.script(CODE, { ...CODE, id: 'call_ci2' }, ANSWER);
    const res = await h.create(ask({ max_tool_calls: 1 }));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.output.map((o) => [o.type, o.status]),
      [
        ['code_interpreter_call', 'completed'],
        ['code_interpreter_call', 'incomplete'],
      ],
    );
    // Not run: no output of the code, at most a note that the limit was reached.
    const logs = res.body.output[1]?.outputs?.[0]?.logs;
    assert.ok(logs === undefined || /max_tool_calls/.test(logs), String(logs));
    assert.equal(chatRequests(h.upstream).length, 2, 'no third model call');
  });

  it('streamed: the run is an item with its code and steps, between the two model calls', async () => {
    h.upstream.script(CODE, ANSWER);
    const res = await streamResponse(h.server, h.apiKey, ask());
    assert.equal(res.status, 200, res.text);
    const types = res.events.map((e) => e.data.type).filter((t) => t !== 'response.output_text.delta');
    assert.deepEqual(types, [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.code_interpreter_call_code.done',
      'response.code_interpreter_call.in_progress',
      'response.code_interpreter_call.interpreting',
      'response.code_interpreter_call.completed',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    assert.deepEqual(
      res.events.map((e) => e.data.sequence_number),
      res.events.map((_, i) => i),
    );
    const run = res.events.find((e) => e.data.type === 'response.output_item.done')?.data.item as OutputItem;
    assert.equal(run.outputs?.[0]?.logs.trim(), '42');
    const completed = res.events.at(-1)?.data.response as { output: OutputItem[]; usage: { input_tokens: number } };
    assert.deepEqual(
      completed.output.map((o) => o.type),
      ['code_interpreter_call', 'message'],
    );
    assert.equal(completed.usage.input_tokens, 24);
    assert.equal(toolTurns()[1]?.content?.trim(), '42');
    assert.equal(chatRequests(h.upstream)[1]?.stream, true);
    // The header went out with the first call's credit; the usage row has both calls'.
    assert.equal(res.headers.get('x-credits-charged'), '1');
    const rows = await eventually(
      () =>
        h.server.usageRows<{ credits: number; prompt_tokens: number }>(
          'SELECT credits, prompt_tokens FROM usage_records WHERE request_id = $1',
          [res.headers.get('x-request-id')],
        ),
      (r) => r.length === 1,
    );
    assert.deepEqual(
      rows.map((r) => [Number(r.credits), Number(r.prompt_tokens)]),
      [[2, 24]],
    );
  });
});
