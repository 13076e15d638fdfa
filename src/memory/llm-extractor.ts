import { z } from 'zod';
import type { Completion, RoutedRequest } from '../providers/index.js';
import type { Extraction, FactExtractor } from './types.js';

const FACT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['content', 'slot'],
  properties: {
    content: { type: 'string', maxLength: 300 },
    slot: { type: ['string', 'null'], maxLength: 64 },
  },
} as const;

/** What the model must answer: OpenAI `response_format` json_schema (the local engine turns it into a grammar). */
export const EXTRACTION_RESPONSE_FORMAT = {
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
        forget: { type: 'array', maxItems: 20, items: FACT_SCHEMA },
      },
    },
  },
} as const;

const fact = z.object({
  content: z.string().trim().min(1).max(300),
  slot: z.string().trim().min(1).max(64).nullable(),
});
const answer = z.object({ facts: z.array(fact).max(20), forget: z.array(fact).max(20) });

const INSTRUCTIONS = `You extract durable facts a user states about themselves, for a memory that lasts across conversations.
Read only the user's messages. For each fact, write one short sentence in the third person starting with "The user" (e.g. "The user is allergic to peanuts.").
Give a fact a "slot" when only one value can be true at a time (name, location, employer, occupation, age, or "my:<thing>" for "my <thing> is …", "prefers:<topic>"), so a correction replaces the old value; otherwise null.
List in "forget" what the user asks you to forget, in the same form.
Ignore questions, greetings, requests for help and anything about other people. Answer with JSON only.`;

export interface LlmExtractorOptions {
  /** The PV model that extracts (memory.extractionModel). */
  model: string;
  generate(model: string, request: RoutedRequest, signal: AbortSignal): Promise<Completion>;
}

/**
 * Extraction by a model through the provider layer, constrained to a JSON schema. The answer is
 * validated again here (an upstream may ignore response_format); anything else is an error, which
 * the memory service logs without touching the user's memories. Reconciliation with existing
 * memories stays deterministic (reconcile.ts) whichever extractor found the facts.
 */
export class LlmExtractor implements FactExtractor {
  readonly name = 'llm';
  readonly #options: LlmExtractorOptions;

  constructor(options: LlmExtractorOptions) {
    this.#options = options;
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
        maxTokens: 512,
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
    return result.data;
  }
}
