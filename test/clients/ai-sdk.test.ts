import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, cosineSimilarity, embed, embedMany, generateText, isStepCount, streamText, tool } from 'ai';
import { z } from 'zod';
import { backends } from '../support/databases.js';
import { EMBEDDING_MODEL } from '../support/documents.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The AI SDK (`ai` with `@ai-sdk/openai-compatible`, the pinned devDependencies) against pvai over real HTTP,
 * used as its documentation shows: no custom fetch, no request rewriting. PV-TURBO answers from a real
 * OpenAI-wire upstream on loopback, so every answer is known and what pvai forwarded can be read; the client's
 * request building and its parsing of pvai's JSON, SSE and error bodies are what is under test. PV-EMBED embeds
 * with the real all-MiniLM-L6-v2 where scripts/setup put it.
 */

const ANSWER = 'Paris is the capital of France.';

interface ErrorBody {
  message: string;
  code: string;
  error: { message: string; code: string };
}
interface UpstreamMessage {
  role: string;
  content: string | null;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}
interface UpstreamBody {
  max_tokens?: number;
  messages: UpstreamMessage[];
  tools?: Array<{ function: { name: string; parameters: { properties: Record<string, unknown> } } }>;
}

const weather = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
});

for (const backend of backends()) {
  describe(`the AI SDK against pvai (${backend})`, () => {
    let upstream: MockUpstream;
    let server: TestServer;
    let pvai: ReturnType<typeof createOpenAICompatible>;
    let apiKey: string;

    before(async () => {
      upstream = await startMockUpstream({ defaultText: ANSWER });
      const target = { provider: 'openai-compatible' as const, baseUrl: upstream.url, model: 'up', maxRetries: 0 };
      server = await startTestServer(backend, {
        config: {
          embeddingModel: EMBEDDING_MODEL,
          tiers: { business: { rpm: 10_000 } },
          routing: { 'PV-TURBO': [target] },
        },
      });
      ({ apiKey } = await server.createAccount('business', 10_000));
      pvai = createOpenAICompatible({ name: 'pvai', baseURL: `${server.url}/z1`, apiKey, includeUsage: true });
    });
    after(async () => {
      await server?.close();
      await upstream?.close();
    });
    beforeEach(() => upstream.reset());

    const sent = (i = -1) => upstream.requests.at(i)?.body as UpstreamBody;
    /** pvai's own error body for a request, as a client without a library sees it. */
    const pvaiError = async (body: Record<string, unknown>, key = apiKey) => {
      const res = await server.request<ErrorBody>('POST', '/z1/chat/completions', { apiKey: key, body });
      assert.ok(res.status >= 400, res.text);
      return res;
    };

    it('generateText: the answer, its finish reason and usage; maxOutputTokens and the end user (`user`) reach pvai', async () => {
      const result = await generateText({
        model: pvai('PV-TURBO'),
        prompt: 'What is the capital of France?',
        maxOutputTokens: 40,
        providerOptions: { pvai: { user: 'user-1' } },
        maxRetries: 0,
      });
      assert.equal(result.text, ANSWER);
      assert.equal(result.finishReason, 'stop');
      assert.equal(result.usage.inputTokens, 12);
      assert.equal(result.usage.outputTokens, 7);
      assert.equal(upstream.requests.length, 1);
      assert.equal(sent().max_tokens, 40);
      assert.deepEqual(sent().messages.at(-1), { role: 'user', content: 'What is the capital of France?' });
    });

    it('streamText: the text arrives in pieces, joins to the answer, and the usage chunk is read', async () => {
      const result = streamText({
        model: pvai('PV-TURBO'),
        system: 'Answer in one sentence.',
        prompt: 'What is the capital of France?',
        providerOptions: { pvai: { user: 'user-1' } },
        maxRetries: 0,
      });
      const pieces: string[] = [];
      for await (const piece of result.textStream) pieces.push(piece);
      assert.ok(pieces.length > 1, `one piece only: ${JSON.stringify(pieces)}`);
      assert.equal(pieces.join(''), ANSWER);
      assert.equal(await result.finishReason, 'stop');
      const usage = await result.usage;
      assert.equal(usage.inputTokens, 12);
      assert.equal(usage.outputTokens, 7);
      assert.equal(upstream.requests[0]?.stream, true);
      assert.deepEqual(
        sent()
          .messages.slice(-2)
          .map((m) => m.role),
        ['system', 'user'],
      );
    });

    it('a tool call streamed in fragments is assembled, run, and its result sent back for the answer (two steps)', async () => {
      upstream.script(
        { kind: 'tool-call', name: 'weather', id: 'call_1', argumentChunks: ['{"ci', 'ty": "Par', 'is"}'] },
        { kind: 'answer', text: 'It is sunny in Paris.' },
      );
      const cities: string[] = [];
      const result = streamText({
        model: pvai('PV-TURBO'),
        prompt: 'What is the weather in Paris?',
        tools: {
          weather: tool({
            ...weather,
            execute: async ({ city }) => {
              cities.push(city);
              return { city, sky: 'sunny' };
            },
          }),
        },
        stopWhen: isStepCount(2),
        // pvai's other end-user field, as an extra body field of this provider.
        providerOptions: { pvai: { user_id: 'user-2' } },
        maxRetries: 0,
      });
      assert.equal(await result.text, 'It is sunny in Paris.');
      assert.deepEqual(cities, ['Paris']);
      const steps = await result.steps;
      assert.equal(steps.length, 2);
      assert.equal(steps[0]?.finishReason, 'tool-calls');
      assert.deepEqual(
        steps[0]?.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input]),
        [['call_1', 'weather', { city: 'Paris' }]],
      );
      // The tool as pvai passed it on, and the second step's turns as the AI SDK wrote them.
      assert.deepEqual(Object.keys(sent(0).tools?.[0]?.function.parameters.properties ?? {}), ['city']);
      const [call, result2] = sent(1).messages.slice(-2);
      assert.equal(call?.role, 'assistant');
      assert.deepEqual(
        call?.tool_calls?.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
        [['call_1', 'weather', { city: 'Paris' }]],
      );
      assert.equal(result2?.role, 'tool');
      assert.equal(result2?.tool_call_id, 'call_1');
      assert.deepEqual(JSON.parse(result2?.content ?? 'null'), { city: 'Paris', sky: 'sunny' });
    });

    it('generateText with a tool: the call, its id and its parsed input', async () => {
      upstream.script({ kind: 'tool-call', name: 'weather', id: 'call_7', argumentChunks: ['{"city": "Oslo"}'] });
      const result = await generateText({
        model: pvai('PV-TURBO'),
        prompt: 'Weather in Oslo?',
        tools: { weather },
        toolChoice: { type: 'tool', toolName: 'weather' },
        providerOptions: { pvai: { user: 'user-1' } },
        maxRetries: 0,
      });
      assert.equal(result.finishReason, 'tool-calls');
      assert.deepEqual(
        result.toolCalls.map((c) => [c.toolCallId, c.toolName, c.input]),
        [['call_7', 'weather', { city: 'Oslo' }]],
      );
    });

    it('embedMany and embed: one vector per value, in order; similar texts closer than an unrelated one', async () => {
      const model = pvai.embeddingModel('PV-EMBED');
      const values = [
        'The cat sat on the mat.',
        'A kitten is resting on the rug.',
        'Taxes are due at the end of March.',
      ];
      const { embeddings, usage } = await embedMany({ model, values, maxRetries: 0 });
      assert.equal(embeddings.length, 3);
      for (const vector of embeddings) assert.equal(vector.length, 384);
      const [cat, kitten, taxes] = embeddings as [number[], number[], number[]];
      const similar = cosineSimilarity(cat, kitten);
      assert.ok(
        similar > cosineSimilarity(cat, taxes),
        `similar ${similar}, unrelated ${cosineSimilarity(cat, taxes)}`,
      );
      assert.ok(similar > cosineSimilarity(kitten, taxes));
      assert.ok(usage.tokens > 0);
      const { embedding } = await embed({ model, value: values[1] as string, maxRetries: 0 });
      assert.ok(cosineSimilarity(embedding, kitten) > 0.9999);
    });

    it("an unknown model (chat and embeddings): the thrown error's message is pvai's message", async () => {
      const expected = await pvaiError({
        model: 'PV-NOPE',
        user: 'user-1',
        messages: [{ role: 'user', content: 'hi' }],
      });
      assert.equal(expected.status, 400);
      assert.match(expected.body.message, /model/);
      const error = await generateText({
        model: pvai('PV-NOPE'),
        prompt: 'hi',
        providerOptions: { pvai: { user: 'user-1' } },
        maxRetries: 0,
      }).then(
        () => assert.fail('generateText succeeded with an unknown model'),
        (err: unknown) => err,
      );
      assert.ok(APICallError.isInstance(error), String(error));
      assert.equal(error.statusCode, 400);
      assert.equal(error.message, expected.body.message);
      assert.equal(upstream.requests.length, 0);

      // The same for embeddings: a chat model is not an embedding model.
      const raw = await server.request<ErrorBody>('POST', '/z1/embeddings', {
        apiKey,
        body: { model: 'PV-TURBO', input: ['hi'] },
      });
      assert.equal(raw.status, 400);
      const embedError = await embedMany({
        model: pvai.embeddingModel('PV-TURBO'),
        values: ['hi'],
        maxRetries: 0,
      }).then(
        () => assert.fail('embedMany succeeded with a chat model'),
        (err: unknown) => err,
      );
      assert.ok(APICallError.isInstance(embedError), String(embedError));
      assert.equal(embedError.message, raw.body.message);
    });

    it("no credits left (402): streamText's error part carries pvai's message", async () => {
      const { apiKey: brokeKey } = await server.createAccount('business', 0);
      const expected = await pvaiError(
        { model: 'PV-TURBO', user: 'user-1', messages: [{ role: 'user', content: 'hi' }] },
        brokeKey,
      );
      assert.equal(expected.status, 402);
      const broke = createOpenAICompatible({ name: 'pvai', baseURL: `${server.url}/z1`, apiKey: brokeKey });
      const errors: unknown[] = [];
      const result = streamText({
        model: broke('PV-TURBO'),
        prompt: 'hi',
        providerOptions: { pvai: { user: 'user-1' } },
        maxRetries: 0,
        onError: ({ error }) => {
          errors.push(error);
        },
      });
      const parts: string[] = [];
      for await (const part of result.fullStream) parts.push(part.type);
      assert.ok(parts.includes('error'), parts.join(', '));
      assert.equal(errors.length, 1);
      const [error] = errors;
      assert.ok(APICallError.isInstance(error), String(error));
      assert.equal(error.statusCode, 402);
      assert.equal(error.message, expected.body.message);
      assert.equal(upstream.requests.length, 0);
    });
  });
}
