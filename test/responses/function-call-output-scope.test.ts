import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type ResponseBody, type ResponsesHarness, startResponses, streamResponse } from './support.js';

/**
 * A `function_call_output` answers a function call the request can see: in its own input, in the chain of its
 * `previous_response_id`, or in its `conversation`. One whose `call_id` is none of those (or is another chain's
 * or conversation's) is 400 naming the field and the call id, whole or streamed, and costs nothing: no credit,
 * no billed usage row, nothing asked upstream.
 */
const weather = { type: 'function', name: 'weather', parameters: { type: 'object', properties: {} } };

describe('function_call_output: a call_id the request cannot see is refused and not billed', () => {
  let h: ResponsesHarness;

  before(async () => {
    h = await startResponses('sqlite', { credits: 100 });
  });
  after(() => h?.close());
  beforeEach(() => h.upstream.reset());

  const balance = async () =>
    Number((await h.server.request('GET', `/admin/accounts/${h.accountId}`, { admin: true })).body.credits);
  const billedRows = async () =>
    (
      await h.server.usageRows<{ status: number; credits: number }>(
        "SELECT status, credits FROM usage_records WHERE account_id = $1 AND endpoint = 'createResponse'",
        [h.accountId],
      )
    ).map((r) => [Number(r.status), Number(r.credits)]);
  const output = (callId: string) => [{ type: 'function_call_output', call_id: callId, output: 'sunny' }];

  /** A response whose answer is a call of `weather` with this id; its id. */
  async function calling(callId: string, extra: Record<string, unknown> = {}): Promise<string> {
    h.upstream.script({ kind: 'tool-call', name: 'weather', argumentChunks: ['{}'], id: callId });
    const res = await h.create<ResponseBody>({
      model: 'PV-TURBO',
      input: `Weather where ${callId} is?`,
      tools: [weather],
      ...extra,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.output.find((o) => o.type === 'function_call')?.call_id, callId);
    return res.body.id;
  }

  /** The request refused, whole and streamed, with nothing charged, billed or asked upstream. */
  async function assertRefused(body: Record<string, unknown>, callId: string): Promise<void> {
    const before = { credits: await balance(), rows: await billedRows(), asked: h.upstream.requests.length };
    const full = { model: 'PV-TURBO', tools: [weather], input: output(callId), ...body };
    const res = await h.create(full);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.code, 'INVALID_PARAMETER');
    assert.equal(res.body.details?.field, 'input[0].call_id');
    assert.ok(res.body.message.includes(callId), res.body.message);
    const streamed = await streamResponse(h.server, h.apiKey, full);
    assert.equal(streamed.status, 400, streamed.text);
    assert.equal((JSON.parse(streamed.text) as { details: { field: string } }).details.field, 'input[0].call_id');
    assert.equal(await balance(), before.credits, 'no credit charged');
    assert.equal(h.upstream.requests.length, before.asked, 'nothing asked upstream');
    const rows = await billedRows();
    assert.deepEqual(rows.slice(before.rows.length), [
      [400, 0],
      [400, 0],
    ]);
  }

  it('inline input: a call_id no function_call of the input makes', async () => {
    await assertRefused({}, 'call_nowhere');
  });

  it('with previous_response_id: a call_id the chain never made (and the one it made is taken)', async () => {
    const previous = await calling('call_in_chain');
    await assertRefused({ previous_response_id: previous }, 'call_not_in_chain');
    const answered = await h.create<ResponseBody>({
      model: 'PV-TURBO',
      tools: [weather],
      previous_response_id: previous,
      input: output('call_in_chain'),
    });
    assert.equal(answered.status, 200, answered.text);
  });

  it("with conversation: a call_id the conversation never made, even one another conversation's", async () => {
    const conversation = async () => {
      const res = await h.server.request<{ id: string }>('POST', '/z1/conversations', { apiKey: h.apiKey, body: {} });
      assert.equal(res.status, 200, res.text);
      return res.body.id;
    };
    const [mine, other] = [await conversation(), await conversation()];
    await calling('call_in_mine', { conversation: mine });
    await calling('call_in_other', { conversation: other });
    await assertRefused({ conversation: mine }, 'call_in_other');
    await assertRefused({ conversation: mine }, 'call_nowhere');
    const answered = await h.create<ResponseBody>({
      model: 'PV-TURBO',
      tools: [weather],
      conversation: mine,
      input: output('call_in_mine'),
    });
    assert.equal(answered.status, 200, answered.text);
  });
});
