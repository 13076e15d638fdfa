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

/**
 * The engine's own repeat penalty on free text (Ollama's default, llama.cpp's for years): a token among the
 * answer's latest REPEAT_WINDOW is made 1.1 times less likely. Without it SmolLM2-135M ran to its answer limit
 * repeating itself on 25 % of short prompts at temperature 0.7 and 50 % at 0 ("Aye, aye, aye, …"); with it, 5 %
 * and 0 % (docs/routing.md). Not on grammar-constrained output: JSON repeats its quotes and braces by design.
 */
const REPEAT_PENALTY = 1.1;
const REPEAT_WINDOW = 64;

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
  /** Told once the prompt is in the context: how many of its tokens the cache held, and how many were evaluated. */
  onPrompt?: ((reused: number, evaluated: number) => void) | undefined;
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
  const { sequence, contextTokens, maxTokens, sampling, grammar, stopTokens, signal, onPrompt } = options;
  if (maxTokens <= 0) return;
  if (signal.aborted) throw abortReason(signal);

  // At least one token must be evaluated to get logits, so align the cache to all but the last token.
  await sequence.adaptStateToTokens(contextTokens.slice(0, -1), false);
  if (signal.aborted) throw abortReason(signal);
  const toEvaluate = contextTokens.slice(sequence.nextTokenIndex);
  onPrompt?.(sequence.nextTokenIndex, toEvaluate.length);

  // The answer's own tokens, for the penalties (llama.cpp reads the latest PENALISED_TOKENS of them).
  const sampledTokens: Token[] = [];
  const evaluateOptions: SequenceEvaluateOptions = {
    temperature: sampling.temperature,
    yieldEogToken: true,
    ...(sampling.topP !== undefined ? { topP: sampling.topP } : {}),
    ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
    ...penaltiesOf(sampling, sampledTokens, grammar === undefined),
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
 * llama.cpp's repeat penalty over the answer's latest tokens: on free text the engine's own (REPEAT_PENALTY over
 * REPEAT_WINDOW), and OpenAI's presence and frequency penalties when the request sets them (over
 * PENALISED_TOKENS). Nothing on constrained output whose request sets neither.
 */
function penaltiesOf(
  sampling: SamplingSettings,
  answer: Token[],
  freeText: boolean,
): Pick<SequenceEvaluateOptions, 'repeatPenalty'> | Record<string, never> {
  const { presencePenalty, frequencyPenalty } = sampling;
  const openai = Boolean(presencePenalty || frequencyPenalty);
  if (!openai && !freeText) return {};
  return {
    repeatPenalty: {
      punishTokens: () => answer,
      maxPunishTokens: openai ? PENALISED_TOKENS : REPEAT_WINDOW,
      penalty: freeText ? REPEAT_PENALTY : 1,
      ...(presencePenalty ? { presencePenalty } : {}),
      ...(frequencyPenalty ? { frequencyPenalty } : {}),
    },
  };
}
