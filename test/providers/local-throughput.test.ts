/**
 * Measurement, not a pass/fail check: tokens per second through LocalChatProvider versus driving
 * node-llama-cpp directly on the same model and thread count. Numbers go to the test diagnostics.
 */

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { GeneralChatWrapper, type LlamaModel } from 'node-llama-cpp';
import { LocalChatProvider } from '../../src/providers/local/index.js';
import { getSharedLlama } from '../../src/providers/local/llama-runtime.js';
import { TEST_MODEL } from '../support/server.js';

const MODEL_PATH = TEST_MODEL;
const TOKENS = 1000;
const ROUNDS = 3;
const PROMPT = 'Tell me a story about a cat.';

let provider: LocalChatProvider;
let model: LlamaModel;

before(async () => {
  provider = new LocalChatProvider({ modelPath: MODEL_PATH, threads: 1, sequences: 2 });
  await provider.load();
  model = await (await getSharedLlama()).loadModel({ modelPath: MODEL_PATH });
});
after(async () => {
  await provider.close();
  await model.dispose();
});

it('tokens/s: provider vs node-llama-cpp directly (report only)', async (t) => {
  const promptTokens = new GeneralChatWrapper()
    .generateContextState({
      chatHistory: [
        { type: 'user', text: PROMPT },
        { type: 'model', response: [] },
      ],
    })
    .contextText.tokenize(model.tokenizer);
  const context = await model.createContext({ threads: 1, contextSize: 2048 });
  const sequence = context.getSequence();

  const direct: number[] = [];
  const viaProvider: number[] = [];
  const streamedFirstToken: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    await sequence.clearHistory();
    let count = 0;
    let started = performance.now();
    // temperature > 0 so no early end-of-story: a fixed seed keeps both sides comparable
    for await (const token of sequence.evaluate(promptTokens, { temperature: 0.8, seed: round })) {
      if (model.isEogToken(token)) break;
      if (++count >= TOKENS) break;
    }
    direct.push((count / (performance.now() - started)) * 1000);

    started = performance.now();
    let first = 0;
    let completionTokens = 0;
    for await (const part of provider.stream(
      {
        model: 'stories',
        messages: [{ role: 'user', content: PROMPT }],
        maxTokens: TOKENS,
        temperature: 0.8,
        seed: round,
      },
      new AbortController().signal,
    )) {
      if (part.type === 'text-delta' && first === 0) first = performance.now() - started;
      if (part.type === 'finish') completionTokens = part.usage.completionTokens;
    }
    viaProvider.push((completionTokens / (performance.now() - started)) * 1000);
    streamedFirstToken.push(first);
  }
  await context.dispose();

  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  t.diagnostic(
    `direct node-llama-cpp: ${median(direct).toFixed(0)} tokens/s (rounds: ${direct.map((v) => v.toFixed(0)).join(', ')})`,
  );
  t.diagnostic(
    `through LocalChatProvider: ${median(viaProvider).toFixed(0)} tokens/s (rounds: ${viaProvider.map((v) => v.toFixed(0)).join(', ')})`,
  );
  t.diagnostic(`provider time to first text: ${median(streamedFirstToken).toFixed(1)} ms`);
  assert.ok(median(viaProvider) > 0);
});
