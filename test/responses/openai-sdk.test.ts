import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { NotFoundError } from 'openai';
import { backends } from '../support/databases.js';
import { chatRequests, type ResponseBody, type ResponsesHarness, startResponses } from './support.js';

/**
 * The official `openai` SDK (the pinned devDependency), unmodified but for its base URL, against
 * /z1/responses over real HTTP; PV-TURBO answers from a mock OpenAI upstream whose received requests show
 * what pvai made of each Responses request.
 */
const ANSWER = 'Paris is the capital of France.';
const weatherTool = {
  type: 'function' as const,
  name: 'weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: true,
};

for (const backend of backends()) {
  describe(`the openai SDK's responses API (${backend})`, () => {
    let h: ResponsesHarness;

    before(async () => {
      h = await startResponses(backend, { defaultText: ANSWER });
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    it('create: a string input with instructions is one user turn after the instructions; the answer is a message', async () => {
      const response = await h.client.responses.create({
        model: 'PV-TURBO',
        input: 'What is the capital of France?',
        instructions: 'Answer in one sentence.',
        safety_identifier: 'alice',
      });
      assert.match(response.id, /^resp_[0-9a-f]{32}$/);
      assert.equal(response.object, 'response');
      assert.equal(response.status, 'completed');
      assert.equal(response.output_text, ANSWER);
      assert.equal(response.output.length, 1);
      const [message] = response.output;
      assert.equal(message?.type, 'message');
      assert.equal(message?.type === 'message' && message.role, 'assistant');
      assert.equal(response.instructions, 'Answer in one sentence.');
      assert.deepEqual(
        [response.usage?.input_tokens, response.usage?.output_tokens, response.usage?.total_tokens],
        [12, 7, 19],
      );
      const [sent] = chatRequests(h.upstream);
      assert.equal(chatRequests(h.upstream).length, 1);
      assert.ok(
        sent?.messages.some((m) => m.role === 'system' && m.content?.includes('Answer in one sentence.')),
        JSON.stringify(sent?.messages),
      );
      assert.deepEqual(sent?.messages.at(-1), { role: 'user', content: 'What is the capital of France?' });
      assert.equal(sent?.model, 'up');
    });

    it('create: input items (a developer message, input_text parts) become system and user turns', async () => {
      const response = await h.client.responses.create({
        model: 'PV-TURBO',
        user: 'alice',
        input: [
          { role: 'developer', content: 'Be terse.' },
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'input_text', text: 'Capital of France? ' },
              { type: 'input_text', text: 'One word.' },
            ],
          },
        ],
      });
      assert.equal(response.output_text, ANSWER);
      const [sent] = chatRequests(h.upstream);
      const system = sent?.messages.filter((m) => m.role === 'system').map((m) => m.content) ?? [];
      assert.ok(
        system.some((c) => c?.includes('Be terse.')),
        JSON.stringify(sent?.messages),
      );
      assert.deepEqual(sent?.messages.at(-1), { role: 'user', content: 'Capital of France? One word.' });
    });

    it('stream: the documented events in order, sequence numbers 0, 1, 2…, the deltas joined are the answer', async () => {
      const stream = h.client.responses.stream({
        model: 'PV-TURBO',
        input: 'Capital of France?',
        safety_identifier: 'alice',
      });
      const types: string[] = [];
      const sequence: number[] = [];
      let text = '';
      let completed: unknown;
      for await (const event of stream) {
        types.push(event.type);
        sequence.push(event.sequence_number);
        if (event.type === 'response.output_text.delta') text += event.delta;
        if (event.type === 'response.completed') completed = event.response;
      }
      const deltas = types.filter((t) => t === 'response.output_text.delta').length;
      assert.ok(deltas > 1, `${deltas} delta`);
      assert.deepEqual(types, [
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        ...Array(deltas).fill('response.output_text.delta'),
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      assert.deepEqual(
        sequence,
        types.map((_, i) => i),
      );
      assert.equal(text, ANSWER);
      const final = await stream.finalResponse();
      assert.equal(final.status, 'completed');
      assert.equal(final.output_text, ANSWER);
      assert.equal(chatRequests(h.upstream)[0]?.stream, true);
      // The stored response is the one the stream ended with.
      const stored = await h.server.request('GET', `/z1/responses/${final.id}`, { apiKey: h.apiKey });
      assert.deepEqual(stored.body, completed);
    });

    it('stream: a function call arrives as function_call_arguments deltas, then done, in its own output item', async () => {
      h.upstream.script({
        kind: 'tool-call',
        name: 'weather',
        id: 'call_s1',
        argumentChunks: ['{"ci', 'ty": "Paris"}'],
      });
      const stream = h.client.responses.stream({
        model: 'PV-TURBO',
        input: 'Weather in Paris?',
        tools: [weatherTool],
        safety_identifier: 'alice',
      });
      const events: Array<{ type: string; delta?: string; arguments?: string }> = [];
      for await (const event of stream) events.push(event as (typeof events)[number]);
      assert.deepEqual(
        events.map((e) => e.type),
        [
          'response.created',
          'response.in_progress',
          'response.output_item.added',
          'response.function_call_arguments.delta',
          'response.function_call_arguments.delta',
          'response.function_call_arguments.done',
          'response.output_item.done',
          'response.completed',
        ],
      );
      assert.deepEqual(
        events.filter((e) => e.type.endsWith('arguments.delta')).map((e) => e.delta),
        ['{"ci', 'ty": "Paris"}'],
      );
      assert.equal(events.find((e) => e.type.endsWith('arguments.done'))?.arguments, '{"city": "Paris"}');
      const final = await stream.finalResponse();
      assert.equal(final.output.length, 1);
      const [call] = final.output;
      assert.equal(call?.type, 'function_call');
      if (call?.type !== 'function_call') return;
      assert.deepEqual([call.call_id, call.name, call.arguments], ['call_s1', 'weather', '{"city": "Paris"}']);
    });

    it('retrieve: the stored response is the body that create returned', async () => {
      const created = await h.create({
        model: 'PV-TURBO',
        user_id: 'alice',
        input: 'Hello',
        metadata: { ticket: 't-1' },
      });
      assert.equal(created.status, 200, created.text);
      const got = await h.server.request<ResponseBody>('GET', `/z1/responses/${created.body.id}`, { apiKey: h.apiKey });
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, created.body);
      const viaSdk = await h.client.responses.retrieve(created.body.id);
      assert.deepEqual(viaSdk.metadata, { ticket: 't-1' });
      assert.equal(viaSdk.output_text, ANSWER);
    });

    it('delete: deleted, then retrieve, input items and a second delete are 404', async () => {
      const created = await h.client.responses.create({
        model: 'PV-TURBO',
        input: 'Hello',
        safety_identifier: 'alice',
      });
      const raw = await h.server.request('DELETE', `/z1/responses/${created.id}`, { apiKey: h.apiKey });
      assert.equal(raw.status, 200);
      assert.deepEqual(raw.body, { id: created.id, object: 'response', deleted: true });
      const refusals = await Promise.all([
        h.client.responses.retrieve(created.id).then(
          () => undefined,
          (e: unknown) => e,
        ),
        h.client.responses.delete(created.id).then(
          () => undefined,
          (e: unknown) => e,
        ),
        h.client.responses.inputItems.list(created.id).then(
          () => undefined,
          (e: unknown) => e,
        ),
      ]);
      for (const err of refusals) {
        assert.ok(err instanceof NotFoundError, String(err));
        assert.equal(err.status, 404);
        assert.equal(err.code, 'not_found');
      }
      // And through the SDK's own delete.
      const other = await h.client.responses.create({ model: 'PV-TURBO', input: 'Hi', safety_identifier: 'alice' });
      await h.client.responses.delete(other.id);
      await assert.rejects(h.client.responses.retrieve(other.id), NotFoundError);
    });

    it('inputItems.list: the items with ids, newest first by default; asc pages with limit and after', async () => {
      const created = await h.client.responses.create({
        model: 'PV-TURBO',
        safety_identifier: 'alice',
        input: [
          { role: 'user', content: 'first' },
          { role: 'assistant', content: 'second' },
          { role: 'user', content: [{ type: 'input_text', text: 'third' }] },
        ],
      });
      const texts = (items: Array<{ type: string }>) =>
        items.map((i) => {
          const content = (i as unknown as { content: string | Array<{ text: string }> }).content;
          return typeof content === 'string' ? content : content.map((c) => c.text).join('');
        });
      const page = await h.client.responses.inputItems.list(created.id);
      assert.deepEqual(texts(page.data), ['third', 'second', 'first']);
      assert.ok(page.data.every((i) => i.type === 'message' && typeof i.id === 'string' && i.id.length > 0));
      const all: Array<{ type: string }> = [];
      for await (const item of h.client.responses.inputItems.list(created.id, { order: 'asc', limit: 1 }))
        all.push(item);
      assert.deepEqual(texts(all), ['first', 'second', 'third']);
    });

    it('function tools round trip: a function_call, then its output through previous_response_id, and the answer', async () => {
      h.upstream.script(
        { kind: 'tool-call', name: 'weather', id: 'call_w1', argumentChunks: ['{"city":"Paris"}'] },
        { kind: 'answer', text: 'It is sunny in Paris.' },
      );
      const first = await h.client.responses.create({
        model: 'PV-TURBO',
        input: 'What is the weather in Paris?',
        tools: [weatherTool],
        tool_choice: 'auto',
        safety_identifier: 'alice',
      });
      assert.equal(first.status, 'completed');
      const [call] = first.output;
      assert.equal(call?.type, 'function_call');
      if (call?.type !== 'function_call') return;
      assert.deepEqual(
        [call.call_id, call.name, JSON.parse(call.arguments)],
        ['call_w1', 'weather', { city: 'Paris' }],
      );
      const [firstSent] = chatRequests(h.upstream);
      assert.deepEqual(
        firstSent?.tools?.map((t) => [t.type, t.function.name, Object.keys(t.function.parameters?.properties ?? {})]),
        [['function', 'weather', ['city']]],
      );

      const second = await h.client.responses.create({
        model: 'PV-TURBO',
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: 'call_w1', output: '{"sky":"sunny"}' }],
        tools: [weatherTool],
        safety_identifier: 'alice',
      });
      assert.equal(second.output_text, 'It is sunny in Paris.');
      assert.equal(second.previous_response_id, first.id);
      // The upstream was given the whole conversation: the question, the call, and its output.
      const sent = chatRequests(h.upstream)[1];
      const turns = sent?.messages.filter((m) => m.role !== 'system');
      assert.deepEqual(turns, [
        { role: 'user', content: 'What is the weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_w1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_w1', content: '{"sky":"sunny"}' },
      ]);
    });

    it('text.format json_schema reaches the upstream as response_format', async () => {
      h.upstream.script({ kind: 'answer', text: '{"city":"Paris"}' });
      const schema = {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      };
      const response = await h.client.responses.create({
        model: 'PV-TURBO',
        input: 'Which city is the capital of France?',
        text: { format: { type: 'json_schema', name: 'capital', schema, strict: true } },
        safety_identifier: 'alice',
      });
      assert.deepEqual(JSON.parse(response.output_text), { city: 'Paris' });
      assert.deepEqual(response.text?.format, { type: 'json_schema', name: 'capital', schema, strict: true });
      assert.deepEqual(chatRequests(h.upstream)[0]?.response_format, {
        type: 'json_schema',
        json_schema: { name: 'capital', schema, strict: true },
      });
    });

    it('max_output_tokens reached: status incomplete with reason max_output_tokens, whole or streamed', async () => {
      h.upstream.script({ kind: 'answer', text: 'Once upon a time there', finishReason: 'length' });
      const response = await h.client.responses.create({
        model: 'PV-TURBO',
        input: 'Tell me a long story.',
        max_output_tokens: 5,
        safety_identifier: 'alice',
      });
      assert.equal(response.status, 'incomplete');
      assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
      assert.equal(response.output_text, 'Once upon a time there');
      assert.equal(response.output[0]?.type === 'message' && response.output[0].status, 'incomplete');
      assert.equal(response.max_output_tokens, 5);
      assert.equal(chatRequests(h.upstream)[0]?.max_tokens, 5);

      h.upstream.script({ kind: 'answer', text: 'Once upon a time there', finishReason: 'length' });
      const stream = h.client.responses.stream({
        model: 'PV-TURBO',
        input: 'Tell me another long story.',
        max_output_tokens: 5,
        safety_identifier: 'alice',
      });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      assert.equal(types.at(-1), 'response.incomplete');
      assert.ok(!types.includes('response.completed'));
      const final = await stream.finalResponse();
      assert.equal(final.status, 'incomplete');
      assert.deepEqual(final.incomplete_details, { reason: 'max_output_tokens' });
    });
  });
}
