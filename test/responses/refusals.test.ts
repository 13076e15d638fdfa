import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { BadRequestError } from 'openai';
import { eventually } from '../support/eventually.js';
import { chatRequests, type ResponsesHarness, startResponses, streamResponse } from './support.js';

interface Refusal {
  name: string;
  body: Record<string, unknown>;
  code: string;
  field: string;
  /** What the message must say, so the caller knows what to change. */
  message: RegExp;
}

const weather = { type: 'function', name: 'weather', parameters: { type: 'object', properties: {} } };

/** Requests the Responses API refuses, each with the field at fault (the end user's field removed by `user_id: undefined`). */
const REFUSALS: Refusal[] = [
  {
    name: 'a tool type pvai does not run',
    body: { tools: [{ type: 'computer_use_preview', display_width: 1024 }] },
    code: 'INVALID_PARAMETER',
    field: 'tools[0].type',
    message: /computer_use_preview is not a tool pvai runs/,
  },
  {
    name: 'tool_choice naming a function that is not in tools',
    body: { tools: [weather], tool_choice: { type: 'function', name: 'forecast' } },
    code: 'INVALID_PARAMETER',
    field: 'tool_choice.name',
    message: /forecast, which is not in tools/,
  },
  {
    name: 'tool_choice of type function without its name',
    body: { tools: [weather], tool_choice: { type: 'function' } },
    code: 'INVALID_PARAMETER',
    field: 'tool_choice.name',
    message: /tool_choice\.name is required/,
  },
  {
    name: 'tool_choice naming a built-in tool that is not in tools',
    body: { tools: [weather], tool_choice: { type: 'file_search' } },
    code: 'INVALID_PARAMETER',
    field: 'tool_choice.type',
    message: /file_search, which is not in tools/,
  },
  {
    name: 'include asking for log-probabilities',
    body: { include: ['message.output_text.logprobs'] },
    code: 'INVALID_PARAMETER',
    field: 'include',
    message: /log-probabilities are not returned/,
  },
  {
    name: 'an input_image part',
    body: {
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is in this picture?' },
            { type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' },
          ],
        },
      ],
    },
    code: 'UNSUPPORTED_CONTENT',
    field: 'input[0].content[1]',
    message: /input_image: the models here read text only/,
  },
  {
    name: 'tool_choice required with no tools',
    body: { tool_choice: 'required' },
    code: 'INVALID_PARAMETER',
    field: 'tool_choice',
    message: /tool_choice required needs tools/,
  },
  {
    name: 'a named function as tool_choice with no tools',
    body: { tool_choice: { type: 'function', name: 'weather' } },
    code: 'INVALID_PARAMETER',
    field: 'tool_choice',
    message: /needs tools/,
  },
  {
    name: 'a function_call_output answering no function_call of the conversation',
    body: { input: [{ type: 'function_call_output', call_id: 'call_nowhere', output: 'sunny' }] },
    code: 'INVALID_PARAMETER',
    field: 'input[0].call_id',
    message: /call_nowhere answers no function_call/,
  },
  {
    name: 'background with store: false',
    body: { background: true, store: false },
    code: 'INVALID_PARAMETER',
    field: 'background',
    message: /background needs store/,
  },
  {
    name: 'both conversation and previous_response_id',
    body: { conversation: 'conv_1', previous_response_id: 'resp_1' },
    code: 'INVALID_PARAMETER',
    field: 'conversation',
    message: /cannot both be given/,
  },
  {
    name: 'a compaction item pvai did not make',
    body: { input: [{ type: 'compaction', encrypted_content: 'gAAAAABpM0Yj-not-ours=' }] },
    code: 'INVALID_PARAMETER',
    field: 'input[0].encrypted_content',
    message: /not a compaction made by POST \/z1\/responses\/compact/,
  },
  {
    name: 'a function_call_output without its call_id',
    body: { input: [{ type: 'function_call_output', output: 'sunny' }] },
    code: 'INVALID_PARAMETER',
    field: 'input[0].call_id',
    message: /call_id is required/,
  },
  {
    name: 'json_schema without a schema',
    body: { text: { format: { type: 'json_schema', name: 'answer' } } },
    code: 'INVALID_PARAMETER',
    field: 'text.format.schema',
    message: /schema is required/,
  },
];

/**
 * Bad input is a 400 with a code and the field at fault, as JSON even when a stream was asked for, never a
 * 500; nothing reaches the upstream and nothing is charged. Storage plays no part: SQLite only.
 */
describe('requests the Responses API refuses', () => {
  let h: ResponsesHarness;

  before(async () => {
    h = await startResponses('sqlite', { credits: 100 });
  });
  after(() => h?.close());
  beforeEach(() => h.upstream.reset());

  const bodyOf = (r: Refusal) => {
    const body: Record<string, unknown> = { model: 'PV-TURBO', user_id: 'alice', input: 'Hello', ...r.body };
    for (const [key, value] of Object.entries(body)) if (value === undefined) delete body[key];
    return body;
  };
  const balance = async () =>
    Number((await h.server.request('GET', `/admin/accounts/${h.accountId}`, { admin: true })).body.credits);

  for (const refusal of REFUSALS) {
    it(`${refusal.name}: 400 ${refusal.code} naming ${refusal.field}, whole or streamed`, async () => {
      const res = await h.create(bodyOf(refusal));
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, refusal.code);
      assert.equal(res.body.details?.field, refusal.field);
      assert.match(res.body.message, refusal.message);
      assert.equal(res.body.error.code, refusal.code.toLowerCase());
      const streamed = await streamResponse(h.server, h.apiKey, bodyOf(refusal));
      assert.equal(streamed.status, 400, streamed.text);
      assert.match(streamed.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal((JSON.parse(streamed.text) as { code: string }).code, refusal.code);
      assert.equal(chatRequests(h.upstream).length, 0, 'nothing reached the upstream');
    });
  }

  it('none of them charged a credit, and each usage row says 400', async () => {
    assert.equal(await balance(), 100);
    const rows = await eventually(
      () =>
        h.server.usageRows<{ status: number }>(
          "SELECT status FROM usage_records WHERE account_id = $1 AND endpoint = 'createResponse'",
          [h.accountId],
        ),
      (r) => r.length === REFUSALS.length * 2,
    );
    assert.equal(rows.length, REFUSALS.length * 2);
    assert.ok(rows.every((r) => Number(r.status) === 400));
  });

  it('the openai SDK throws its BadRequestError with the code and param of the refusal', async () => {
    const error = await h.client.responses
      .create({
        model: 'PV-TURBO',
        safety_identifier: 'alice',
        input: [
          {
            role: 'user',
            content: [{ type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' }],
          },
        ],
      })
      .then(
        () => assert.fail('an input_image was accepted'),
        (err: unknown) => err,
      );
    assert.ok(error instanceof BadRequestError, String(error));
    assert.equal(error.status, 400);
    assert.equal(error.code, 'unsupported_content');
    assert.equal(error.param, 'input[0].content[0]');
    assert.match(error.message, /input_image/);
  });
});
