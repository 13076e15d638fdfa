import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  chatRequests,
  type ErrorBody,
  type ResponsesHarness,
  startResponses,
  type UpstreamMessage,
} from '../responses/support.js';
import { backends } from '../support/databases.js';

/**
 * `conversation` on POST /z1/responses: the conversation's items come before the input (the upstream receives
 * the whole history every turn), and each response's input and output items are appended to it once it answered.
 */
const weatherTool = {
  type: 'function' as const,
  name: 'weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: true,
};

interface Item {
  id: string;
  type: string;
  role?: string;
  status?: string;
  content?: string | Array<{ type: string; text: string }>;
  call_id?: string;
  output?: string;
}

/** A message item's text, or `(type call_id)` for another item. */
function summary(item: Item): string {
  if (item.type !== 'message') return `(${item.type} ${item.call_id ?? ''})`;
  const text = typeof item.content === 'string' ? item.content : (item.content ?? []).map((p) => p.text).join('');
  return `${item.role}: ${text}`;
}

for (const backend of backends()) {
  describe(`responses in a conversation (${backend})`, () => {
    let h: ResponsesHarness;

    before(async () => {
      h = await startResponses(backend);
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    const itemsOf = async (id: string): Promise<Item[]> => {
      const res = await h.server.request<{ data: Item[] }>('GET', `/z1/conversations/${id}/items?order=asc&limit=100`, {
        apiKey: h.apiKey,
      });
      assert.equal(res.status, 200, res.text);
      return res.body.data;
    };
    /** What the upstream was last sent, system turns (instructions, context) left out. */
    const lastTurns = (): UpstreamMessage[] =>
      chatRequests(h.upstream)
        .at(-1)
        ?.messages.filter((m) => m.role !== 'system') ?? [];

    it('three turns: the upstream gets the whole history each turn, the conversation grows by each input and output', async () => {
      const conversation = await h.client.conversations.create({
        items: [{ type: 'message', role: 'developer', content: 'Answer in five words at most.' }],
      });

      h.upstream.script({ kind: 'answer', text: 'Hello Ada, nice to meet.' });
      const first = await h.client.responses.create({
        model: 'PV-TURBO',
        conversation: conversation.id,
        input: 'Hi, I am Ada.',
      });
      assert.equal(first.status, 'completed');
      assert.deepEqual(first.conversation, { id: conversation.id }, 'the response names its conversation');
      assert.deepEqual(lastTurns(), [{ role: 'user', content: 'Hi, I am Ada.' }]);
      const system = chatRequests(h.upstream)[0]?.messages.filter((m) => m.role === 'system') ?? [];
      assert.ok(
        system.some((m) => m.content?.includes('Answer in five words at most.')),
        'the developer item is a system turn',
      );

      h.upstream.script({ kind: 'answer', text: 'Lyon is in France.' });
      const second = await h.client.responses.create({
        model: 'PV-TURBO',
        conversation: { id: conversation.id },
        input: [{ role: 'user', content: 'Where is Lyon?' }],
      });
      assert.deepEqual(second.conversation, { id: conversation.id });
      assert.deepEqual(lastTurns(), [
        { role: 'user', content: 'Hi, I am Ada.' },
        { role: 'assistant', content: 'Hello Ada, nice to meet.' },
        { role: 'user', content: 'Where is Lyon?' },
      ]);

      // The third turn streamed: a streamed response is appended as a whole one is.
      h.upstream.script({ kind: 'answer', text: 'Your name is Ada.' });
      const stream = await h.client.responses.create({
        model: 'PV-TURBO',
        conversation: conversation.id,
        input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is my name?' }] }],
        stream: true,
      });
      let third: { id: string; output: Array<{ id?: string }>; conversation?: unknown } | undefined;
      for await (const event of stream) if (event.type === 'response.completed') third = event.response;
      assert.ok(third);
      assert.deepEqual(third.conversation, { id: conversation.id });
      assert.deepEqual(lastTurns(), [
        { role: 'user', content: 'Hi, I am Ada.' },
        { role: 'assistant', content: 'Hello Ada, nice to meet.' },
        { role: 'user', content: 'Where is Lyon?' },
        { role: 'assistant', content: 'Lyon is in France.' },
        { role: 'user', content: 'What is my name?' },
      ]);

      const items = await itemsOf(conversation.id);
      assert.deepEqual(items.map(summary), [
        'developer: Answer in five words at most.',
        'user: Hi, I am Ada.',
        'assistant: Hello Ada, nice to meet.',
        'user: Where is Lyon?',
        'assistant: Lyon is in France.',
        'user: What is my name?',
        'assistant: Your name is Ada.',
      ]);
      // The output items are the responses' own, under their ids; every message says it is complete.
      assert.deepEqual(
        [items[2]?.id, items[4]?.id, items[6]?.id],
        [first.output[0]?.id, second.output[0]?.id, third.output[0]?.id],
      );
      for (const item of items) assert.equal(item.status, 'completed', item.id);
      // The input items are the responses' input items, under the same ids.
      const input = await h.client.responses.inputItems.list(second.id);
      assert.equal(input.data[0]?.id, items[3]?.id);
    });

    it('a function call round trip: the model asks, the next turn sends only the output with the conversation', async () => {
      const conversation = await h.client.conversations.create({ user_id: 'alice' } as never);
      h.upstream.script({ kind: 'tool-call', name: 'weather', id: 'call_w1', argumentChunks: ['{"city":"Paris"}'] });
      const asked = await h.client.responses.create({
        model: 'PV-TURBO',
        user: 'alice',
        conversation: conversation.id,
        input: 'Weather in Paris?',
        tools: [weatherTool],
      } as never);
      assert.deepEqual(
        asked.output.map((o) => o.type),
        ['function_call'],
      );
      assert.deepEqual((await itemsOf(conversation.id)).map(summary), [
        'user: Weather in Paris?',
        '(function_call call_w1)',
      ]);

      h.upstream.script({ kind: 'answer', text: 'It is 21 degrees in Paris.' });
      const answered = await h.client.responses.create({
        model: 'PV-TURBO',
        user: 'alice',
        conversation: conversation.id,
        input: [{ type: 'function_call_output', call_id: 'call_w1', output: '{"temp":21}' }],
        tools: [weatherTool],
      } as never);
      assert.equal(answered.output_text, 'It is 21 degrees in Paris.');
      assert.deepEqual(lastTurns(), [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_w1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_w1', content: '{"temp":21}' },
      ]);
      const items = await itemsOf(conversation.id);
      assert.deepEqual(items.map(summary), [
        'user: Weather in Paris?',
        '(function_call call_w1)',
        '(function_call_output call_w1)',
        'assistant: It is 21 degrees in Paris.',
      ]);
      assert.equal(items[1]?.id, asked.output[0]?.id);
      assert.match(items[2]?.id ?? '', /^fco_/);
    });

    it('a function_call_output answering no call of the conversation is 400 naming it; nothing is sent or added', async () => {
      const conversation = await h.client.conversations.create({ items: [{ role: 'user', content: 'Hi' }] });
      const res = await h.create({
        model: 'PV-TURBO',
        conversation: conversation.id,
        input: [{ type: 'function_call_output', call_id: 'call_nowhere', output: 'x' }],
      });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.code, 'INVALID_PARAMETER');
      assert.equal(res.body.details?.field, 'input[0].call_id');
      assert.equal(chatRequests(h.upstream).length, 0);
      assert.deepEqual((await itemsOf(conversation.id)).map(summary), ['user: Hi']);
    });

    it('a response that fails adds nothing to its conversation', async () => {
      const conversation = await h.client.conversations.create({ items: [{ role: 'user', content: 'Hi' }] });
      h.upstream.script({ kind: 'status', status: 500 });
      const res = await h.create({ model: 'PV-TURBO', conversation: conversation.id, input: 'Anyone there?' });
      assert.ok(res.status >= 500, res.text);
      assert.deepEqual((await itemsOf(conversation.id)).map(summary), ['user: Hi']);
    });

    it('a conversation deleted while a response runs: the response completes, nothing is added, nothing fails', async () => {
      const conversation = await h.client.conversations.create({ items: [{ role: 'user', content: 'Hi' }] });
      h.upstream.script({ kind: 'slow', chunks: ['Still ', 'here.'], delayMs: 150 });
      const running = h.create({ model: 'PV-TURBO', conversation: conversation.id, input: 'Slow one' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await h.client.conversations.delete(conversation.id);
      const res = await running;
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.status, 'completed');
      const gone = await h.server.request('GET', `/z1/conversations/${conversation.id}/items`, { apiKey: h.apiKey });
      assert.equal(gone.status, 404);
      const rows = await h.server.running.runtime.db.query<{ n: number }>(
        'SELECT COUNT(*) AS n FROM conversation_items WHERE conversation_id = $1',
        [conversation.id],
      );
      assert.equal(Number(rows[0]?.n), 0, 'no item outlives its conversation');
    });

    it('responses running at once in one conversation each append their input and output together', async () => {
      const conversation = await h.client.conversations.create();
      const turns = Array.from({ length: 6 }, (_, i) => `Question ${i}`);
      const answers = await Promise.all(
        turns.map((input) => h.create({ model: 'PV-TURBO', conversation: conversation.id, input, skip_cache: true })),
      );
      for (const a of answers) assert.equal(a.status, 200, a.text);
      const items = await itemsOf(conversation.id);
      assert.equal(items.length, 12);
      // Each question is followed by its own answer: no other response's items fall between them.
      for (let i = 0; i < items.length; i += 2) {
        const question = items[i];
        const answer = items[i + 1];
        const response = answers.find((a) => a.body.output[0]?.id === answer?.id);
        assert.ok(response, `${answer?.id} is an answer`);
        const input = await h.client.responses.inputItems.list(response.body.id);
        assert.equal(input.data[0]?.id, question?.id);
      }
    });

    it('conversation with previous_response_id is 400 naming conversation', async () => {
      const conversation = await h.client.conversations.create();
      const res = await h.create({
        model: 'PV-TURBO',
        conversation: conversation.id,
        previous_response_id: 'resp_0123',
        input: 'Hi',
      });
      assert.equal(res.status, 400, res.text);
      assert.equal((res.body as ErrorBody).details?.field, 'conversation');
    });

    it('a deleted conversation as conversation is 404 naming it', async () => {
      const conversation = await h.client.conversations.create();
      await h.client.conversations.delete(conversation.id);
      const res = await h.create({ model: 'PV-TURBO', conversation: conversation.id, input: 'Hi' });
      assert.equal(res.status, 404, res.text);
      assert.equal(res.body.code, 'NOT_FOUND');
      assert.equal(res.body.details?.field, 'conversation');
      assert.equal(chatRequests(h.upstream).length, 0);
    });
  });
}
