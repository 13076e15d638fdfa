import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type OpenAI from 'openai';
import { requireSetUp, SMOLLM2_MODEL, setUpSkip } from '../support/models.js';
import { assemble, collect, openaiClient, type PvParams } from '../support/openai-client.js';
import { startTestServer, type TestServer } from '../support/server.js';

type Params = PvParams<OpenAI.ChatCompletionCreateParamsNonStreaming>;
type StreamParams = PvParams<OpenAI.ChatCompletionCreateParamsStreaming>;

/** Control tokens of SmolLM2's ChatML template: a rendering or stop mistake would leak them. */
const TEMPLATE_TOKENS = /<\|im_(start|end)\|>|<\|endoftext\|>/;

/**
 * The default chat model, SmolLM2-135M-Instruct, where scripts/setup put it, on the default routing
 * (each PV model's own answer budget). Temperature 0, so the answers are the model's most likely ones.
 */
describe('SmolLM2-135M-Instruct answers on the default routing', { skip: setUpSkip([SMOLLM2_MODEL]) }, () => {
  let server: TestServer;
  let client: OpenAI;

  before(async () => {
    requireSetUp([SMOLLM2_MODEL]);
    server = await startTestServer('sqlite', {
      config: { localModel: SMOLLM2_MODEL, tiers: { startup: { rpm: 10_000 } } },
    });
    client = openaiClient(server.url, (await server.createAccount('startup', 1000)).apiKey);
  });
  after(() => server?.close());

  it('answers with a fact given in the prompt, and stops by itself', async () => {
    const data = await client.chat.completions.create({
      model: 'PV-STANDARD',
      user_id: 'u1',
      temperature: 0,
      skip_cache: true,
      messages: [
        { role: 'system', content: 'Answer the question using the sources.' },
        {
          role: 'user',
          content:
            'Sources:\n[1] The Harbor Street warehouse opened in 2019.\n[2] The Harbor Street warehouse employs 42 people.\n\n' +
            'Question: How many people does the Harbor Street warehouse employ?',
        },
      ],
    } as Params);
    const text = data.choices[0]?.message.content ?? '';
    assert.match(text, /\b42\b/);
    assert.doesNotMatch(text, TEMPLATE_TOKENS);
    assert.equal(data.choices[0]?.finish_reason, 'stop', 'the chat template ends the answer, not the budget');
  });

  it('streams an answer to a question it knows', async () => {
    const stream = await client.chat.completions.create({
      model: 'PV-TURBO',
      user_id: 'u1',
      temperature: 0,
      stream: true,
      skip_cache: true,
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
    } as StreamParams);
    const { text, finishReasons } = assemble(await collect(stream));
    assert.match(text, /Paris/);
    assert.doesNotMatch(text, TEMPLATE_TOKENS);
    assert.deepEqual(finishReasons, ['stop']);
  });

  it('writes Python on PV-CODEX', async () => {
    const data = await client.chat.completions.create({
      model: 'PV-CODEX',
      user_id: 'u1',
      temperature: 0,
      max_tokens: 60,
      skip_cache: true,
      messages: [{ role: 'user', content: 'Write a Python function that returns the square of a number.' }],
    } as Params);
    assert.match(data.choices[0]?.message.content ?? '', /def \w+\(\w+\):\s+return \w+ \*\* 2/);
  });
});
