import {
  type LlamaContextSequence,
  type LlamaGrammar,
  LlamaGrammarEvaluationState,
  type SequenceEvaluateOptions,
  type Token,
} from 'node-llama-cpp';
import { abortReason } from '../types.js';

export interface SamplingSettings {
  temperature: number;
  topP?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
}

/**
 * How many of the answer's latest tokens OpenAI's penalties look back over here: llama.cpp keeps them in a
 * buffer of this size (its default is 64); 256 tokens is a long paragraph.
 */
const PENALISED_TOKENS = 256;

export interface SampleTokensOptions {
  sequence: LlamaContextSequence;
  /** Everything that must be in the context before the first sampled token (prompt + forced tokens). */
  contextTokens: readonly Token[];
  /** Upper bound of sampled tokens; the caller has already clamped it to the context window. */
  maxTokens: number;
  sampling: SamplingSettings;
  grammar?: LlamaGrammar;
  /** Tokens that end generation like EOS does (chat-wrapper stop tokens). */
  stopTokens?: ReadonlySet<Token>;
  signal: AbortSignal;
}

/**
 * Samples up to `maxTokens` tokens, yielding each one; ends silently at an end-of-generation token
 * (which is not yielded). Throws the abort reason as soon as `signal` fires (checked per token, so a
 * disconnect stops the engine within one token). Breaking out of the loop stops evaluation too.
 *
 * The sequence keeps its KV cache between requests: only the suffix that differs from what is
 * already cached is evaluated, so multi-turn chats re-use their common prefix.
 */
export async function* sampleTokens(options: SampleTokensOptions): AsyncGenerator<Token, void, undefined> {
  const { sequence, contextTokens, maxTokens, sampling, grammar, stopTokens, signal } = options;
  if (maxTokens <= 0) return;
  if (signal.aborted) throw abortReason(signal);

  // At least one token must be evaluated to get logits, so align the cache to all but the last token.
  await sequence.adaptStateToTokens(contextTokens.slice(0, -1), false);
  if (signal.aborted) throw abortReason(signal);
  const toEvaluate = contextTokens.slice(sequence.nextTokenIndex);

  // The answer's own tokens, for the penalties (llama.cpp reads the latest PENALISED_TOKENS of them).
  const sampledTokens: Token[] = [];
  const evaluateOptions: SequenceEvaluateOptions = {
    temperature: sampling.temperature,
    yieldEogToken: true,
    ...(sampling.topP !== undefined ? { topP: sampling.topP } : {}),
    ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
    ...penaltiesOf(sampling, sampledTokens),
    ...(grammar ? { grammarEvaluationState: new LlamaGrammarEvaluationState({ model: sequence.model, grammar }) } : {}),
  };

  const model = sequence.model;
  let sampled = 0;
  for await (const token of sequence.evaluate(toEvaluate, evaluateOptions)) {
    if (signal.aborted) throw abortReason(signal);
    if (model.isEogToken(token) || stopTokens?.has(token)) return;
    yield token;
    sampled++;
    if (sampledTokens.length === PENALISED_TOKENS) sampledTokens.shift();
    sampledTokens.push(token);
    if (sampled >= maxTokens) return;
  }
}

/**
 * OpenAI's presence and frequency penalties as llama.cpp's repeat penalty over the answer's latest tokens
 * (its multiplicative `penalty` left at 1, off). Nothing when the request sets neither.
 */
function penaltiesOf(
  sampling: SamplingSettings,
  answer: Token[],
): Pick<SequenceEvaluateOptions, 'repeatPenalty'> | Record<string, never> {
  const { presencePenalty, frequencyPenalty } = sampling;
  if (!presencePenalty && !frequencyPenalty) return {};
  return {
    repeatPenalty: {
      punishTokens: () => answer,
      maxPunishTokens: PENALISED_TOKENS,
      penalty: 1,
      ...(presencePenalty ? { presencePenalty } : {}),
      ...(frequencyPenalty ? { frequencyPenalty } : {}),
    },
  };
}
