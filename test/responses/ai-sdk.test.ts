import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, isStepCount, streamText, tool } from 'ai';
import { z } from 'zod';
import { backends } from '../support/databases.js';
import { chatRequests, type ResponsesHarness, startResponses } from './support.js';

/**
 * The AI SDK's first-party OpenAI provider (`@ai-sdk/openai`, pinned) with its defaults: `openai('PV-TURBO')`
 * is its Responses model, which calls POST /responses. Nothing is changed but the base URL; the end user is
 * the provider's own `safetyIdentifier` option. PV-TURBO answers from a mock upstream on loopback.
 */
const ANSWER = 'Paris is the capital of France.';
const pvaiOptions = { openai: { safetyIdentifier: 'alice' } };

interface InputItem {
  type: string;
  call_id?: string;
  output?: string;
  role?: string;
}

for (const backend of backends()) {
  describe(`the AI SDK's @ai-sdk/openai provider against /z1/responses (${backend})`, () => {
    let h: ResponsesHarness;
    let openai: ReturnType<typeof createOpenAI>;

    before(async () => {
      h = await startResponses(backend, { defaultText: ANSWER });
      openai = createOpenAI({ baseURL: `${h.server.url}/z1`, apiKey: h.apiKey });
    });
    after(() => h?.close());
    beforeEach(() => h.upstream.reset());

    /** The stored response the AI SDK's call made (its id is the response metadata's). */
    const stored = async (id: string | undefined) => {
      assert.match(id ?? '', /^resp_/);
      const res = await h.server.request<{ status: string; user_id: string }>('GET', `/z1/responses/${id}`, {
        apiKey: h.apiKey,
      });
      assert.equal(res.status, 200);
      return res.body;
    };

    it('generateText: the answer, its finish reason and usage; maxOutputTokens and the system prompt reach the upstream', async () => {
      const result = await generateText({
        model: openai('PV-TURBO'),
        system: 'Answer in one sentence.',
        prompt: 'What is the capital of France?',
        maxOutputTokens: 40,
        providerOptions: pvaiOptions,
        maxRetries: 0,
      });
      assert.equal(result.text, ANSWER);
      assert.equal(result.finishReason, 'stop');
      assert.equal(result.usage.inputTokens, 12);
      assert.equal(result.usage.outputTokens, 7);
      assert.deepEqual((await stored(result.response.id)).user_id, 'alice');
      const sent = chatRequests(h.upstream);
      assert.equal(sent.length, 1);
      assert.equal(sent[0]?.max_tokens, 40);
      assert.ok(sent[0]?.messages.some((m) => m.role === 'system' && m.content?.includes('Answer in one sentence.')));
      assert.deepEqual(sent[0]?.messages.at(-1), { role: 'user', content: 'What is the capital of France?' });
    });

    it('streamText: the text arrives in pieces and joins to the answer; finish reason and usage are read', async () => {
      const result = streamText({
        model: openai('PV-TURBO'),
        prompt: 'What is the capital of France?',
        providerOptions: pvaiOptions,
        maxRetries: 0,
      });
      const pieces: string[] = [];
      for await (const piece of result.textStream) pieces.push(piece);
      assert.ok(pieces.length > 1, `one piece only: ${JSON.stringify(pieces)}`);
      assert.equal(pieces.join(''), ANSWER);
      assert.equal(await result.finishReason, 'stop');
      const usage = await result.usage;
      assert.deepEqual([usage.inputTokens, usage.outputTokens], [12, 7]);
      assert.equal(chatRequests(h.upstream)[0]?.stream, true);
      assert.equal((await stored((await result.response).id)).status, 'completed');
    });

    const weatherTool = (cities: string[]) =>
      tool({
        description: 'The weather in a city',
        inputSchema: z.object({ city: z.string() }),
        execute: async ({ city }) => {
          cities.push(city);
          return { city, sky: 'sunny' };
        },
      });

    /** The second model call pvai made carries the tool's call and its result, as the AI SDK ran it. */
    const assertToolResultSent = (callId: string, question: string) => {
      const sent = chatRequests(h.upstream);
      assert.equal(sent.length, 2);
      assert.equal(sent[0]?.tools?.[0]?.function.name, 'weather');
      const turns = sent[1]?.messages.filter((m) => m.role !== 'system') ?? [];
      assert.deepEqual(turns[0], { role: 'user', content: question });
      const call = turns.find((m) => m.role === 'assistant' && m.tool_calls);
      assert.deepEqual(
        call?.tool_calls?.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
        [[callId, 'weather', { city: 'Paris' }]],
      );
      const result = turns.at(-1);
      assert.equal(result?.role, 'tool');
      assert.equal(result?.tool_call_id, callId);
      assert.deepEqual(JSON.parse(result?.content ?? 'null'), { city: 'Paris', sky: 'sunny' });
    };

    it('generateText with a tool and stopWhen: the call runs, its result goes back to pvai, the second step answers', async () => {
      h.upstream.script(
        { kind: 'tool-call', name: 'weather', id: 'call_g1', argumentChunks: ['{"city":"Paris"}'] },
        { kind: 'answer', text: 'It is sunny in Paris.' },
      );
      const cities: string[] = [];
      const result = await generateText({
        model: openai('PV-TURBO'),
        prompt: 'What is the weather in Paris?',
        tools: { weather: weatherTool(cities) },
        stopWhen: isStepCount(3),
        providerOptions: pvaiOptions,
        maxRetries: 0,
      });
      assert.equal(result.text, 'It is sunny in Paris.');
      assert.deepEqual(cities, ['Paris']);
      assert.equal(result.steps.length, 2);
      assert.equal(result.steps[0]?.finishReason, 'tool-calls');
      assert.deepEqual(
        result.steps[0]?.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input]),
        [['call_g1', 'weather', { city: 'Paris' }]],
      );
      assert.deepEqual(
        result.steps.map((s) => [s.usage.inputTokens, s.usage.outputTokens]),
        [
          [12, 7],
          [12, 7],
        ],
      );
      assert.deepEqual([result.totalUsage.inputTokens, result.totalUsage.outputTokens], [24, 14]);
      assertToolResultSent('call_g1', 'What is the weather in Paris?');
      // The second step's response keeps the tool's output among its input items.
      const second = result.steps[1]?.response.id;
      const items = await h.server.request<{ data: InputItem[] }>(
        'GET',
        `/z1/responses/${second}/input_items?order=asc`,
        { apiKey: h.apiKey },
      );
      assert.equal(items.status, 200);
      const output = items.body.data.find((i) => i.type === 'function_call_output');
      assert.equal(output?.call_id, 'call_g1');
      assert.deepEqual(JSON.parse(output?.output ?? 'null'), { city: 'Paris', sky: 'sunny' });
    });

    it('streamText with a tool streamed in fragments: assembled, run, and the result sent back for the answer', async () => {
      h.upstream.script(
        { kind: 'tool-call', name: 'weather', id: 'call_s1', argumentChunks: ['{"ci', 'ty": "Par', 'is"}'] },
        { kind: 'answer', text: 'It is sunny in Paris.' },
      );
      const cities: string[] = [];
      // Another question: the same one would be answered from the response cache, as in chat.
      const result = streamText({
        model: openai('PV-TURBO'),
        prompt: 'And the weather in Paris today?',
        tools: { weather: weatherTool(cities) },
        stopWhen: isStepCount(2),
        providerOptions: pvaiOptions,
        maxRetries: 0,
      });
      assert.equal(await result.text, 'It is sunny in Paris.');
      assert.deepEqual(cities, ['Paris']);
      const steps = await result.steps;
      assert.equal(steps.length, 2);
      assert.deepEqual(
        steps[0]?.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input]),
        [['call_s1', 'weather', { city: 'Paris' }]],
      );
      const total = await result.totalUsage;
      assert.deepEqual([total.inputTokens, total.outputTokens], [24, 14]);
      assertToolResultSent('call_s1', 'And the weather in Paris today?');
    });
  });
}
