import { z } from 'zod';
import type { Completion, RoutedRequest } from '../providers/index.js';
import { type Analysis, analyze, ENGLISH_STOP_WORDS } from '../text/index.js';
import { FACT_KINDS, isFactKind } from './extraction/kinds.js';
import { mayState } from './extraction/statements.js';
import type { Extraction, FactExtractor } from './types.js';

const KINDS = Object.keys(FACT_KINDS);
/** Words compared to tell a fact the user stated from one the model made up: stemmed, without the frame of a fact. */
const GROUNDING: Analysis = { stopWords: new Set([...ENGLISH_STOP_WORDS, 'user', 'users']) };

const FACT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['content', 'kind', 'replaces'],
  properties: {
    content: { type: 'string', maxLength: 300 },
    kind: { type: 'string', enum: KINDS },
    replaces: { type: 'array', maxItems: 3, items: { type: 'string', maxLength: 60 } },
  },
} as const;
const FORGET_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['content'],
  properties: { content: { type: 'string', maxLength: 300 } },
} as const;

/** What the model must answer: OpenAI `response_format` json_schema (the local engine turns it into a grammar). */
const EXTRACTION_RESPONSE_FORMAT = {
  type: 'json_schema',
  json_schema: {
    name: 'memory_extraction',
    strict: true,
    schema: {
      type: 'object',
      additionalProperties: false,
      required: ['facts', 'forget'],
      properties: {
        facts: { type: 'array', maxItems: 20, items: FACT_SCHEMA },
        forget: { type: 'array', maxItems: 20, items: FORGET_SCHEMA },
      },
    },
  },
} as const;

const fact = z.object({
  content: z.string().trim().min(1).max(300),
  // An upstream may ignore the enum: an unknown kind is a fact without a slot.
  kind: z.string().trim().max(64).nullable().optional(),
  replaces: z.array(z.string().trim().min(1).max(60)).max(3).optional(),
});
const answer = z.object({
  facts: z.array(fact).max(20),
  forget: z.array(z.object({ content: z.string().trim().min(1).max(300) })).max(20),
});

const INSTRUCTIONS = `You extract durable facts a user states about themselves, for a memory that lasts across conversations.
Read only the user's messages. For each fact, write one short sentence in the third person starting with "The user" (e.g. "The user is allergic to peanuts.").
Give each fact its "kind": ${KINDS.join(', ')}.
When the user corrects something said before, put the old value(s) they replace in "replaces" (e.g. "Tartu" for "I live in Pärnu now, not Tartu"); otherwise [].
List in "forget" what the user asks you to forget, as a sentence in the same form.
Ignore questions, greetings, requests for help and anything about other people. Answer with JSON only.`;

export interface LlmExtractorOptions {
  /** The PV model that extracts (memory.extractionModel). */
  model: string;
  generate(model: string, request: RoutedRequest, signal: AbortSignal): Promise<Completion>;
}

/**
 * Extraction by a model through the provider layer, constrained to a JSON schema. The answer is
 * validated again here (an upstream may ignore response_format); anything else is an error, which
 * the memory service logs without touching the user's memories (the job is tried again, then dropped).
 * Reconciliation with existing memories stays deterministic (reconcile.ts) whichever extractor found the
 * facts: the model's kind is the slot, its `replaces` the correction's old values.
 */
export class LlmExtractor implements FactExtractor {
  readonly name = 'llm';
  readonly #options: LlmExtractorOptions;

  constructor(options: LlmExtractorOptions) {
    this.#options = options;
  }

  /** The same first look as the default extractor: a turn with nothing to say about the user is not queued. */
  mayState(turn: string): boolean {
    return mayState(turn);
  }

  async extract(userTurns: readonly string[], signal: AbortSignal): Promise<Extraction> {
    const completion = await this.#options.generate(
      this.#options.model,
      {
        messages: [
          { role: 'system', content: INSTRUCTIONS },
          { role: 'user', content: userTurns.map((t, i) => `Message ${i + 1}: ${t}`).join('\n') },
        ],
        temperature: 0,
        // A turn's facts fit in far less (20 facts of ~12 tokens); a small local model that rambles is cut sooner.
        maxTokens: 256,
        responseFormat: EXTRACTION_RESPONSE_FORMAT,
      },
      signal,
    );
    let parsed: unknown;
    try {
      parsed = JSON.parse(completion.text ?? '');
    } catch {
      throw new Error('the extraction model did not answer JSON');
    }
    const result = answer.safeParse(parsed);
    if (!result.success)
      throw new Error(`the extraction model's answer does not fit the schema: ${result.error.message}`);
    // A fact must come from what the user said: one that shares no word with the turns (the instructions'
    // own example, copied by a small model: measured with SmolLM2) is not the user's.
    const said = new Set(analyze(userTurns.join('\n'), GROUNDING));
    const grounded = (content: string) => analyze(content, GROUNDING).some((w) => said.has(w));
    return {
      facts: result.data.facts
        .filter((f) => grounded(f.content))
        .map((f) => ({
          content: f.content,
          slot: f.kind && isFactKind(f.kind) ? f.kind : null,
          ...(f.replaces?.length ? { correction: { replaces: f.replaces } } : {}),
        })),
      forget: result.data.forget.filter((f) => grounded(f.content)).map((f) => ({ content: f.content, slot: null })),
    };
  }
}
