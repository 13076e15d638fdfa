/**
 * bench:local's first table: one stream in this process, node-llama-cpp driven directly against
 * LocalChatProvider.stream (what the chat path calls: the model in its engine process, its parts relayed)
 * on the same model and threads, in alternating rounds so both sides see the same machine; medians.
 */
import { performance } from 'node:perf_hooks';
import { resolveChatWrapper } from 'node-llama-cpp';
import { getSharedLlama, LocalChatProvider } from '../src/providers/index.js';
import { median } from './lib.js';

const TOKENS = Number(process.env.BENCH_TOKENS ?? 400);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3) + 2;
const PROMPT = 'Tell me a story about a cat.';

export async function singleStreamRows(modelPath: string, threads: number): Promise<Array<Array<string | number>>> {
  const provider = new LocalChatProvider({ modelPath, threads, sequences: 2 });
  await provider.load();
  const model = await (await getSharedLlama()).loadModel({ modelPath });
  const context = await model.createContext({ threads, contextSize: 2048 });
  const sequence = context.getSequence();
  // The same prompt the provider renders: the model's own chat template (ChatML for SmolLM2).
  const wrapper = resolveChatWrapper(model);
  const promptTokens = wrapper
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
  const ratio = median(viaProvider) / median(direct);
  return [
    ['one stream: node-llama-cpp directly', median(direct), 1, '—'],
    [
      `one stream: LocalChatProvider.stream (target ≥ 0.95: ${ratio >= 0.95 ? 'met' : 'not met'})`,
      median(viaProvider),
      ratio,
      median(firstText),
    ],
  ];
}
