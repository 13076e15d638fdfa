import { basename } from 'node:path';
import { LRUCache } from 'lru-cache';
import {
  type ChatWrapper,
  type GbnfJsonSchema,
  GeneralChatWrapper,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaGrammar,
  type LlamaModel,
  LlamaText,
  resolveChatWrapper,
  type SpecializedChatWrapperTypeName,
  SpecialTokensText,
  type Token,
} from 'node-llama-cpp';
import { getSharedLlama } from './llama-runtime.js';
import { SequencePool, type WaitBounds } from './sequence-pool.js';

export interface LocalEngineSettings {
  /** Path of the GGUF file. */
  modelPath: string;
  /** CPU threads per evaluation. Default 1: the library default (all cores) is ~1000x slower on small hosts. */
  threads?: number;
  /** Requests served in parallel (context sequences of one shared context). Default 2. */
  sequences?: number;
  /** Requests allowed to wait for a sequence; beyond it requests fail with 'busy'. Default 16. */
  maxQueue?: number;
  /** How long a request may wait for a sequence before it fails with 'busy' (0: no bound). Default 30 s. */
  maxQueueWaitMs?: number;
  /** Tokens per sequence (prompt + answer). Default: the model's training context, capped at 4096. */
  contextSize?: number;
  /**
   * Prompt format. 'auto' (default) uses the format named by the GGUF's chat template and the plain
   * "### Human / ### Assistant" format when the model has no template; or force a named format.
   */
  chatWrapper?: 'auto' | SpecializedChatWrapperTypeName;
}

const LOCAL_ENGINE_DEFAULTS = {
  threads: 1,
  sequences: 2,
  maxQueue: 16,
  maxQueueWaitMs: 30_000,
  maxContextSize: 4096,
} as const;

/** Token-level and text-level forms of a chat wrapper's stop triggers. */
export interface StopTriggers {
  tokens: ReadonlySet<Token>;
  texts: readonly string[];
}

/** A loaded GGUF: model, one context with N sequences, its chat wrapper and cached grammars. */
export class LocalEngine {
  readonly pool: SequencePool<LlamaContextSequence>;
  private readonly grammars = new LRUCache<string, Promise<LlamaGrammar>>({ max: 128 });

  private constructor(
    readonly llama: Llama,
    readonly model: LlamaModel,
    private readonly context: LlamaContext,
    readonly chatWrapper: ChatWrapper,
    bounds: WaitBounds,
  ) {
    const sequences = Array.from({ length: context.totalSequences }, () => context.getSequence());
    this.pool = new SequencePool(sequences, bounds);
  }

  static async load(settings: LocalEngineSettings): Promise<LocalEngine> {
    const llama = await getSharedLlama();
    const model = await llama.loadModel({ modelPath: settings.modelPath });
    try {
      const context = await model.createContext({
        sequences: settings.sequences ?? LOCAL_ENGINE_DEFAULTS.sequences,
        threads: settings.threads ?? LOCAL_ENGINE_DEFAULTS.threads,
        contextSize: settings.contextSize ?? Math.min(model.trainContextSize, LOCAL_ENGINE_DEFAULTS.maxContextSize),
      });
      const wrapper = pickChatWrapper(model, settings.chatWrapper ?? 'auto');
      return new LocalEngine(llama, model, context, wrapper, {
        maxQueue: settings.maxQueue ?? LOCAL_ENGINE_DEFAULTS.maxQueue,
        maxWaitMs: settings.maxQueueWaitMs ?? LOCAL_ENGINE_DEFAULTS.maxQueueWaitMs,
      });
    } catch (err) {
      await model.dispose();
      throw err;
    }
  }

  get name(): string {
    return basename(this.model.filename ?? 'model.gguf');
  }

  /** Tokens one sequence can hold (prompt + answer). */
  get contextSize(): number {
    return this.context.contextSize;
  }

  /** Grammar forcing JSON that matches `schema` (compiled once per distinct schema). */
  grammarForSchema(schema: GbnfJsonSchema): Promise<LlamaGrammar> {
    return this.cachedGrammar(`schema:${JSON.stringify(schema)}`, async () => {
      const generated = await this.llama.createGrammarForJsonSchema<GbnfJsonSchema>(schema);
      const fixed = withoutIntegerExponent(generated.grammar);
      if (fixed === generated.grammar) return generated;
      return this.llama.createGrammar({
        grammar: fixed,
        stopGenerationTriggers: [LlamaText(['\n'.repeat(4)])],
        trimWhitespaceSuffix: true,
      });
    });
  }

  /** Grammar forcing exactly one of `choices` (used to pick a tool name). */
  grammarForChoices(choices: readonly string[]): Promise<LlamaGrammar> {
    const gbnf = `root ::= ${choices.map((choice) => JSON.stringify(choice)).join(' | ')}`;
    return this.cachedGrammar(`gbnf:${gbnf}`, () => this.llama.createGrammar({ grammar: gbnf }));
  }

  /** Any JSON value (OpenAI `response_format: {type: 'json_object'}`). */
  jsonGrammar(): Promise<LlamaGrammar> {
    return this.cachedGrammar('builtin:json', () => this.llama.getGrammarFor('json'));
  }

  /**
   * Splits stop triggers into single special tokens (matched by id, e.g. `<|im_end|>`) and text
   * (matched in the decoded output, e.g. "### Human").
   */
  stopTriggers(triggers: readonly LlamaText[]): StopTriggers {
    const tokens = new Set<Token>();
    const texts = new Set<string>();
    for (const trigger of triggers) {
      const onlySpecial = trigger.values.every((value) => typeof value !== 'string');
      const triggerTokens = onlySpecial ? trigger.tokenize(this.model.tokenizer) : [];
      const [single] = triggerTokens;
      if (triggerTokens.length === 1 && single !== undefined) {
        tokens.add(single);
        continue;
      }
      const text = trigger.values
        .map((value) => (typeof value === 'string' ? value : value instanceof SpecialTokensText ? value.value : ''))
        .join('');
      if (text !== '') texts.add(text);
    }
    return { tokens, texts: [...texts] };
  }

  async close(): Promise<void> {
    this.pool.close();
    await this.context.dispose();
    await this.model.dispose();
  }

  private cachedGrammar(key: string, create: () => Promise<LlamaGrammar>): Promise<LlamaGrammar> {
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar = create();
      this.grammars.set(key, grammar);
      grammar.catch(() => this.grammars.delete(key));
    }
    return grammar;
  }
}

function pickChatWrapper(model: LlamaModel, preference: 'auto' | SpecializedChatWrapperTypeName): ChatWrapper {
  if (preference === 'general') return new GeneralChatWrapper();
  if (preference !== 'auto') return resolveChatWrapper(model, { type: preference });
  // resolveChatWrapper also guesses from file names and BOS strings; without a template that guess is
  // usually wrong (e.g. any "<s>" model becomes Llama 2 chat), so template-less models get the plain format.
  const template = model.fileInfo.metadata?.tokenizer?.chat_template;
  if (typeof template !== 'string' || template.trim() === '') return new GeneralChatWrapper();
  return resolveChatWrapper(model);
}

/**
 * node-llama-cpp's rule for JSON-schema integers also admits an exponent, and with it `5e-3`, which
 * is not an integer. An integer's text is only sign and digits: the exponent is cut from that rule.
 */
export function withoutIntegerExponent(grammar: string): string {
  return grammar.replace(
    /^(integer-number-rule ::= .*?)\s*\(\[eE\] \[-\+\]\? \("0" \| \[1-9\] \[0-9\]\{0,15\}\)\)\?\s*$/m,
    '$1',
  );
}
