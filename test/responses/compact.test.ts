import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { NotFoundError } from 'openai';
import { backends } from '../support/databases.js';
import {
  chatRequests,
  type ErrorBody,
  type ResponsesHarness,
  startResponses,
  systemText,
  type UpstreamBody,
} from './support.js';

interface CompactionItem {
  id: string;
  type: string;
  role?: string;
  content?: Array<{ type: string; text: string }>;
  encrypted_content?: string;
}

const LAUNCH = [
  {
    type: 'message' as const,
    role: 'user' as const,
    content: 'We agreed to launch on Tuesday and notify support first.',
  },
  { type: 'message' as const, role: 'assistant' as const, content: 'Understood: Tuesday, support told beforehand.' },
];

/** The user turn of the summarising call: the transcript pvai gave the model. */
function transcriptOf(body: UpstreamBody | undefined): string {
  return body?.messages.find((m) => m.role === 'user')?.content ?? '';
}

/**
 * `POST /z1/responses/compact` over real HTTP with the official SDK: the conversation shortened to the user's
 * messages and one compaction item holding the model's notes of the rest, which a later response continues from.
 */
for (const backend of backends()) {
  describe(`responses.compact, then a response continuing from it (${backend})`, () => {
    let h: ResponsesHarness;

    before(async () => {
      h = await startResponses(backend, { defaultText: 'Launch Tuesday; support to be told first.' });
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    const balance = async () =>
      Number((await h.server.request('GET', `/admin/accounts/${h.accountId}`, { admin: true })).body.credits);

    it('keeps the user messages as sent, summarises the rest in one charged model call, and a response continues from it', async () => {
      const before = await balance();
      const compacted = await h.client.responses.compact({ model: 'PV-TURBO', input: LAUNCH });
      assert.equal(compacted.object, 'response.compaction');
      assert.match(compacted.id, /^resp_/);
      const output = compacted.output as unknown as CompactionItem[];
      assert.deepEqual(
        output.map((o) => [o.type, o.role]),
        [
          ['message', 'user'],
          ['compaction', undefined],
        ],
      );
      assert.equal(output[0]?.content?.[0]?.text, LAUNCH[0]?.content);
      assert.ok(output[1]?.encrypted_content, 'the compaction item carries its notes');
      const [summarise] = chatRequests(h.upstream);
      assert.equal(chatRequests(h.upstream).length, 1, 'one model call');
      assert.match(systemText(summarise), /compact a conversation/i);
      assert.match(transcriptOf(summarise), /User: We agreed to launch on Tuesday/);
      assert.match(transcriptOf(summarise), /Assistant: Understood: Tuesday/);
      assert.ok(compacted.usage.total_tokens > 0);
      assert.equal(await balance(), before - 1, 'charged as one PV-TURBO call');

      h.upstream.reset();
      const next = await h.client.responses.create({
        model: 'PV-TURBO',
        input: [...(compacted.output as never[]), { role: 'user', content: 'When do we launch?' }],
      });
      assert.equal(next.status, 'completed');
      const turns = chatRequests(h.upstream)[0]?.messages ?? [];
      const summaryTurn = turns.find((m) => m.role === 'system' && /Summary of the conversation/.test(m.content ?? ''));
      assert.ok(summaryTurn, 'the compaction reads as a summary of what came before');
      assert.match(summaryTurn.content ?? '', /Launch Tuesday; support to be told first\./);
      assert.deepEqual(
        turns.filter((m) => m.role === 'user').map((m) => m.content),
        [LAUNCH[0]?.content, 'When do we launch?'],
        'the user messages follow, as sent',
      );
      assert.ok(!turns.some((m) => m.role === 'assistant'), 'the assistant turn is in the summary, not repeated');
    });

    it("compacts a stored response's conversation by previous_response_id, for its own end user only", async () => {
      const first = await h.client.responses.create({
        model: 'PV-TURBO',
        user: 'carol',
        input: 'My badge number is 4471.',
      });
      h.upstream.reset();
      const compacted = await h.client.responses.compact({
        model: 'PV-TURBO',
        previous_response_id: first.id,
        input: [{ role: 'user', content: 'And my desk is B12.' }],
        user: 'carol',
      } as never);
      const texts = (compacted.output as unknown as CompactionItem[])
        .filter((o) => o.type === 'message')
        .map((o) => o.content?.[0]?.text);
      assert.deepEqual(texts, ['My badge number is 4471.', 'And my desk is B12.']);
      assert.match(transcriptOf(chatRequests(h.upstream)[0]), /Assistant: Launch Tuesday/);

      const refused = await h.client.responses
        .compact({ model: 'PV-TURBO', previous_response_id: first.id, user: 'dave' } as never)
        .then(
          () => assert.fail("another end user compacted carol's conversation"),
          (err: unknown) => err,
        );
      assert.ok(refused instanceof NotFoundError, String(refused));
      assert.equal(refused.code, 'previous_response_not_found');
    });

    it('a conversation of user messages only makes no model call and costs nothing', async () => {
      const res = await h.server.request<{ output: CompactionItem[] }>('POST', '/z1/responses/compact', {
        apiKey: h.apiKey,
        body: { model: 'PV-TURBO', input: 'Just one thought.' },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('x-credits-charged'), '0');
      assert.equal(chatRequests(h.upstream).length, 0);
      assert.deepEqual(
        res.body.output.map((o) => o.type),
        ['message', 'compaction'],
      );
    });

    it('refuses what cannot be compacted: no model (400), nothing at all (400), a model outside the tier (403)', async () => {
      const noModel = await h.server.request<ErrorBody>('POST', '/z1/responses/compact', {
        apiKey: h.apiKey,
        body: { input: LAUNCH },
      });
      assert.equal(noModel.status, 400, noModel.text);
      assert.equal(noModel.body.details?.field, 'model');
      const nothing = await h.server.request<ErrorBody>('POST', '/z1/responses/compact', {
        apiKey: h.apiKey,
        body: { model: 'PV-TURBO' },
      });
      assert.equal(nothing.status, 400, nothing.text);
      assert.equal(nothing.body.code, 'INVALID_PARAMETER');
      assert.equal(nothing.body.details?.field, 'input');
      const { apiKey: free } = await h.server.createAccount('free', 10);
      const tier = await h.server.request<ErrorBody>('POST', '/z1/responses/compact', {
        apiKey: free,
        body: { model: 'PV-ADVANCED', input: LAUNCH },
      });
      assert.equal(tier.status, 403, tier.text);
      assert.equal(tier.body.code, 'MODEL_NOT_ALLOWED');
      assert.equal(chatRequests(h.upstream).length, 0);
    });
  });
}
