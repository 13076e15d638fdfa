/**
 * npm run bench:local — the local engine in this process, without HTTP: tokens/s of node-llama-cpp driven
 * directly against the same model through LocalChatProvider's stream (what the chat path calls: the model on
 * the local engine's thread, its parts relayed to this one), and the provider's time to its first text. `bench:chat` measures the same engine through the whole server (HTTP,
 * PV-CODEX → local, non-streamed); the difference between the two is what the server adds around the provider.
 * Alternating rounds, so both sides see the same machine; medians. Prints a markdown table.
 */
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GeneralChatWrapper } from 'node-llama-cpp';
import { getSharedLlama, LocalChatProvider } from '../src/providers/index.js';
import { median, ROOT, table } from './lib.js';

const MODEL_PATH = process.env.PVAI_LOCAL_MODEL ?? join(ROOT, '..', 'shared', 'models', 'stories260K.gguf');
const TOKENS = Number(process.env.BENCH_TOKENS ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PROMPT = 'Tell me a story about a cat.';

const provider = new LocalChatProvider({ modelPath: MODEL_PATH, threads: 1, sequences: 2 });
await provider.load();
const model = await (await getSharedLlama()).loadModel({ modelPath: MODEL_PATH });
const context = await model.createContext({ threads: 1, contextSize: 2048 });
const sequence = context.getSequence();
const promptTokens = new GeneralChatWrapper()
  .generateContextState({
    chatHistory: [
      { type: 'user', text: PROMPT },
      { type: 'model', response: [] },
    ],
  })
  .contextText.tokenize(model.tokenizer);

const direct: number[] = [];
const viaProvider: number[] = [];
const firstText: number[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    await sequence.clearHistory();
    let count = 0;
    let started = performance.now();
    // temperature > 0 so the story does not end early; the seed keeps both sides on the same tokens
    for await (const token of sequence.evaluate(promptTokens, { temperature: 0.8, seed: round })) {
      if (model.isEogToken(token) || ++count >= TOKENS) break;
    }
    direct.push((count / (performance.now() - started)) * 1000);

    started = performance.now();
    let first = 0;
    let completionTokens = 0;
    for await (const part of provider.stream(
      {
        model: 'local',
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
    if (completionTokens === 0) throw new Error('the provider streamed no tokens');
    viaProvider.push((completionTokens / (performance.now() - started)) * 1000);
    firstText.push(first);
  }
} finally {
  await context.dispose();
  await model.dispose();
  await provider.close();
}

console.log(
  `\nLocal engine in process (${MODEL_PATH.split('/').pop()}, threads 1), up to ${TOKENS} tokens, ` +
    `median of ${ROUNDS} alternating rounds\n`,
);
console.log(
  table(
    ['path', 'tokens/s', 'ratio', 'first text (ms)'],
    [
      ['node-llama-cpp directly', median(direct), 1, '—'],
      ['LocalChatProvider.stream', median(viaProvider), median(viaProvider) / median(direct), median(firstText)],
    ],
  ),
);
