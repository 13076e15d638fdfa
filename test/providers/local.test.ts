import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GeneralChatWrapper, type LlamaModel, type Token } from 'node-llama-cpp';
import { z } from 'zod';
import { collectCompletion } from '../../src/providers/completion-collector.js';
import { LocalChatProvider } from '../../src/providers/local/index.js';
import { getSharedLlama } from '../../src/providers/local/llama-runtime.js';
import {
  type GenerationRequest,
  ProviderError,
  type StreamPart,
  type ToolDefinition,
} from '../../src/providers/types.js';
import { TEST_MODEL } from '../support/server.js';

const MODEL_PATH = TEST_MODEL;
const never = (): AbortSignal => new AbortController().signal;
const ask = (content: string, extra: Partial<GenerationRequest> = {}): GenerationRequest => ({
  model: 'stories',
  messages: [{ role: 'user', content }],
  maxTokens: 40,
  temperature: 0,
  ...extra,
});

async function parts(iterable: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of iterable) out.push(part);
  return out;
}

const weatherParameters = z.object({
  city: z.string(),
  unit: z.enum(['celsius', 'fahrenheit']),
  days: z.number().int(),
  alerts: z.boolean(),
});
const weatherTool: ToolDefinition = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather forecast for a city',
    parameters: z.toJSONSchema(weatherParameters) as Record<string, unknown>,
  },
};
const timeParameters = z.object({ zone: z.enum(['utc', 'local']) });
const timeTool: ToolDefinition = {
  type: 'function',
  function: { name: 'get_time', parameters: z.toJSONSchema(timeParameters) as Record<string, unknown> },
};

let provider: LocalChatProvider;
let model: LlamaModel;

before(async () => {
  provider = new LocalChatProvider({ modelPath: MODEL_PATH, threads: 1, sequences: 2, maxQueue: 16 });
  await provider.load();
  // An independent copy of the model, driven directly through node-llama-cpp, as the reference
  // (same runtime: llama.cpp has one process-wide logger, the last runtime created would own it).
  model = await (await getSharedLlama()).loadModel({ modelPath: MODEL_PATH });
});
after(async () => {
  await provider.close();
  await model.dispose();
});

describe('local provider (stories260K)', () => {
  it('returns real text with exact token counts (same as driving node-llama-cpp directly)', async () => {
    const completion = await provider.generate(ask('Tell me a story about a cat.'), never());

    const promptTokens = new GeneralChatWrapper()
      .generateContextState({
        chatHistory: [
          { type: 'user', text: 'Tell me a story about a cat.' },
          { type: 'model', response: [] },
        ],
      })
      .contextText.tokenize(model.tokenizer);
    const context = await model.createContext({ threads: 1, contextSize: 512 });
    const generated: Token[] = [];
    // The engine's own repeat penalty on free text (providers/local/sample-tokens.ts), over the answer's tokens.
    const repeatPenalty = { punishTokens: () => generated, maxPunishTokens: 64, penalty: 1.1 };
    for await (const token of context.getSequence().evaluate(promptTokens, { temperature: 0, repeatPenalty })) {
      generated.push(token);
      if (generated.length >= 40) break;
    }
    await context.dispose();

    assert.equal(completion.finishReason, 'length');
    assert.deepEqual(completion.usage, { promptTokens: promptTokens.length, completionTokens: 40 });
    assert.equal(completion.text, model.detokenize(generated));
    assert.equal(model.tokenize(completion.text ?? '').length, 40);
    assert.match(completion.text ?? '', /[a-z]+ [a-z]+/); // real words, not noise
  });

  it('small maxTokens → finishReason length and completionTokens == maxTokens', async () => {
    const completion = await provider.generate(
      ask('Once upon a time', { maxTokens: 3, temperature: 0.9, seed: 1 }),
      never(),
    );
    assert.equal(completion.finishReason, 'length');
    assert.equal(completion.usage.completionTokens, 3);
  });

  it('seed + temperature reproduce the same text; another seed gives another text', async () => {
    const sampled = (seed: number) =>
      provider.generate(ask('Tell me about a dog.', { temperature: 1, seed, maxTokens: 30 }), never());
    // Warmed first, so both compared runs start from the same cached prompt (see the tool-call comparison below).
    await sampled(42);
    const [first, again, other] = [await sampled(42), await sampled(42), await sampled(4242)];
    assert.equal(first.text, again.text);
    assert.notEqual(first.text, other.text);
  });

  it('honours a stop sequence: text ends before it, finishReason stop', async () => {
    const full = await provider.generate(ask('Tell me a story about a cat.'), never());
    const words = (full.text ?? '').split(' ');
    const stop = ` ${words[3]}`;
    const cut = await provider.generate(ask('Tell me a story about a cat.', { stop: [stop] }), never());
    assert.equal(cut.finishReason, 'stop');
    assert.equal(cut.text, (full.text ?? '').slice(0, (full.text ?? '').indexOf(stop)));
    assert.ok(cut.usage.completionTokens < full.usage.completionTokens);
  });

  it('streams text deltas, then one finish, matching the non-streamed answer', async () => {
    const streamed = await parts(provider.stream(ask('Tell me a story about a cat.'), never()));
    const finish = streamed.at(-1);
    assert.ok(finish?.type === 'finish');
    assert.ok(streamed.slice(0, -1).every((part) => part.type === 'text-delta'));
    assert.ok(streamed.length > 5);
    const text = streamed.flatMap((part) => (part.type === 'text-delta' ? [part.text] : [])).join('');
    const whole = await provider.generate(ask('Tell me a story about a cat.'), never());
    assert.equal(text, whole.text);
    assert.deepEqual(finish.usage, whole.usage);
  });

  it('abort mid-generation stops promptly, long before maxTokens', async () => {
    const controller = new AbortController();
    let deltas = 0;
    let abortedAt = 0;
    await assert.rejects(
      (async () => {
        for await (const part of provider.stream(
          ask('Tell me a long story.', { maxTokens: 1500, temperature: 0.8, seed: 3 }),
          controller.signal,
        )) {
          if (part.type !== 'text-delta') continue;
          deltas++;
          if (deltas === 5) {
            abortedAt = performance.now();
            controller.abort();
          }
        }
      })(),
      { name: 'AbortError' },
    );
    assert.ok(performance.now() - abortedAt < 100, 'ended within 100 ms of the abort');
    assert.ok(deltas < 1500);
    // the sequence went back to the pool
    assert.deepEqual(provider.queueState(), { active: 0, queued: 0 });
  });

  it('serves 4 parallel requests with 2 sequences', async () => {
    const answers = await Promise.all(
      [1, 2, 3, 4].map((seed) =>
        provider.generate(ask('Tell me a story.', { temperature: 0.8, seed, maxTokens: 60 }), never()),
      ),
    );
    for (const answer of answers) {
      assert.ok((answer.text ?? '').length > 0);
      assert.ok(answer.usage.completionTokens > 0);
    }
  });

  it('rejects with busy when every sequence is taken and the queue is full', async () => {
    const small = new LocalChatProvider({ modelPath: MODEL_PATH, sequences: 1, maxQueue: 1 });
    try {
      await small.load();
      const holder = small.stream(ask('Tell me a long story.', { maxTokens: 500 }), never());
      await holder.next(); // suspended after its first part: holds the only sequence
      const queued = small.stream(ask('Another story.'), never());
      const queuedNext = queued.next();
      while (small.queueState().queued < 1) await new Promise((resolve) => setImmediate(resolve));
      await assert.rejects(
        small.generate(ask('A third one.'), never()),
        (err: unknown) => err instanceof ProviderError && err.kind === 'busy',
      );
      await holder.return(undefined); // frees the sequence for the queued request
      assert.equal((await queuedNext).done, false);
      await queued.return(undefined);
    } finally {
      await small.close();
    }
  });

  it('a missing GGUF fails as a retryable upstream error (the router may fall back)', async () => {
    const missing = new LocalChatProvider({ modelPath: '/nonexistent/model.gguf' });
    await assert.rejects(missing.generate(ask('hi'), never()), (err: unknown) => {
      return (
        err instanceof ProviderError &&
        err.kind === 'upstream' &&
        err.retryable &&
        /cannot load local model/.test(err.message)
      );
    });
    await missing.close();
  });

  it('rejects a prompt longer than the context as bad-request', async () => {
    const tiny = new LocalChatProvider({ modelPath: MODEL_PATH, contextSize: 64 });
    try {
      await assert.rejects(
        tiny.generate(ask('word '.repeat(100)), never()),
        (err: unknown) => err instanceof ProviderError && err.kind === 'bad-request',
      );
    } finally {
      await tiny.close();
    }
  });
});

describe('local provider tools (stories260K)', () => {
  it("tool_choice 'required' with one tool → a schema-valid call, finishReason tool_calls", async () => {
    for (const seed of [1, 2, 3]) {
      const completion = await provider.generate(
        ask('What is the weather in Paris?', {
          tools: [weatherTool],
          toolChoice: 'required',
          temperature: 0.7,
          seed,
          maxTokens: 200,
        }),
        never(),
      );
      assert.equal(completion.finishReason, 'tool_calls');
      assert.equal(completion.text, null);
      const [call] = completion.toolCalls;
      assert.ok(call && completion.toolCalls.length === 1);
      assert.match(call.id, /^call_[A-Za-z0-9]{24}$/);
      assert.equal(call.function.name, 'get_weather');
      weatherParameters.parse(JSON.parse(call.function.arguments));
    }
  });

  it('a named tool_choice picks that tool', async () => {
    const completion = await provider.generate(
      ask('What time is it?', {
        tools: [weatherTool, timeTool],
        toolChoice: { type: 'function', function: { name: 'get_time' } },
        temperature: 0.7,
        seed: 5,
        maxTokens: 100,
      }),
      never(),
    );
    assert.equal(completion.toolCalls[0]?.function.name, 'get_time');
    timeParameters.parse(JSON.parse(completion.toolCalls[0]?.function.arguments ?? ''));
  });

  it('picks among several tools under a grammar of their names', async () => {
    const completion = await provider.generate(
      ask('Help me.', {
        tools: [weatherTool, timeTool],
        toolChoice: 'required',
        temperature: 0.7,
        seed: 9,
        maxTokens: 200,
      }),
      never(),
    );
    const name = completion.toolCalls[0]?.function.name;
    assert.ok(name === 'get_weather' || name === 'get_time');
    (name === 'get_time' ? timeParameters : weatherParameters).parse(
      JSON.parse(completion.toolCalls[0]?.function.arguments ?? ''),
    );
  });

  it('streams a tool call as deltas: id + name first, then argument fragments', async () => {
    const streamed = await parts(
      provider.stream(
        ask('Weather in Rome?', { tools: [weatherTool], temperature: 0.7, seed: 2, maxTokens: 200 }),
        never(),
      ),
    );
    const deltas = streamed.filter((part) => part.type === 'tool-call-delta');
    const [first, ...rest] = deltas;
    assert.ok(first?.id?.startsWith('call_') && first.name === 'get_weather' && first.argumentsDelta === '');
    assert.ok(rest.length > 3 && rest.every((part) => part.id === undefined && part.name === undefined));
    weatherParameters.parse(JSON.parse(rest.map((part) => part.argumentsDelta).join('')));
    assert.deepEqual(streamed.at(-1)?.type === 'finish' && streamed.at(-1), {
      type: 'finish',
      finishReason: 'tool_calls',
      usage: (streamed.at(-1) as Extract<StreamPart, { type: 'finish' }>).usage,
    });
  });

  it("'auto' answers in text after a tool result, with tool history (tool_calls, content null, tool, function roles) rendered", async () => {
    const completion = await provider.generate(
      {
        ...ask('What is the weather in Oslo?', { tools: [weatherTool], toolChoice: 'auto', maxTokens: 20 }),
        messages: [
          { role: 'system', content: 'You are a helpful assistant.' },
          { role: 'user', content: 'What is the weather in Oslo?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temperature": 3}' },
          { role: 'function', name: 'get_weather', content: 'cold' },
        ],
      },
      never(),
    );
    assert.equal(completion.toolCalls.length, 0);
    assert.ok((completion.text ?? '').length > 0);
  });

  it("tool_choice 'none' answers in text", async () => {
    const completion = await provider.generate(ask('Weather?', { tools: [weatherTool], toolChoice: 'none' }), never());
    assert.equal(completion.toolCalls.length, 0);
    assert.equal(completion.finishReason, 'length');
  });

  it('response_format json_schema yields JSON matching the schema', async () => {
    const schema = z.object({ name: z.string(), happy: z.boolean() });
    const completion = await provider.generate(
      ask('Describe a dog.', {
        responseFormat: { type: 'json_schema', json_schema: { name: 'dog', schema: z.toJSONSchema(schema) } },
        temperature: 0.5,
        seed: 4,
        maxTokens: 150,
      }),
      never(),
    );
    assert.equal(completion.finishReason, 'stop');
    schema.parse(JSON.parse(completion.text ?? ''));
  });

  it('collectCompletion of the stream equals generate for a tool call', async () => {
    const req = ask('Weather in Rome?', { tools: [weatherTool], temperature: 0.7, seed: 2, maxTokens: 200 });
    // The same seed gives the same tokens only from the same cache state: a prompt evaluated in one batch and a
    // cached prompt plus its last token give logits that differ in the last bits, and at temperature 0.7 that
    // can flip a sample (seen in CI: the arguments parted after six tokens). A first run leaves the prompt
    // cached on the sequence both later runs take (the pool prefers the longest cached prefix).
    await provider.generate(req, never());
    const fromStream = await collectCompletion(provider.stream(req, never()));
    const direct = await provider.generate(req, never());
    assert.ok(direct.toolCalls[0]?.function.arguments, 'a tool call was made');
    assert.equal(fromStream.toolCalls[0]?.function.arguments, direct.toolCalls[0]?.function.arguments);
  });
});
