import { z } from 'zod';
import { MODEL_IDS, type ModelId } from '../kernel/index.js';

const maxTokens = z.number().int().min(1).max(4096);
/** The model's context window in tokens, for the prompt budget of context sources (chat/budget.ts). */
const contextTokens = z.number().int().min(256).max(10_000_000);

const localTarget = z
  .object({
    provider: z.literal('local'),
    /** Display name; the GGUF is `modelPath`, or the service's local model (PVAI_LOCAL_MODEL). */
    model: z.string().min(1).default('local'),
    modelPath: z.string().min(1).optional(),
    maxTokens: maxTokens.optional(),
    contextTokens: contextTokens.optional(),
    /**
     * The temperature of a request that names none, on the PV model whose route this target begins (an operator's
     * setting, as Ollama's Modelfile and vLLM's generation config have it: a small model runs best as its authors
     * recommend). Unset: the contract's 0.7.
     */
    temperature: z.number().min(0).max(2).optional(),
    /** Named so that declaring it says why it is refused, not just that the key is unknown. */
    vision: z
      .literal(false, {
        error: 'the local engine reads text only: vision may be declared on an openai-compatible target only',
      })
      .optional(),
  })
  .strict();

const upstreamTarget = z
  .object({
    provider: z.literal('openai-compatible'),
    model: z.string().min(1),
    baseUrl: z.string().url(),
    /** Prefer `apiKeyEnv` so the key stays out of the config file. */
    apiKey: z.string().min(1).optional(),
    apiKeyEnv: z.string().min(1).optional(),
    timeoutMs: z.number().int().positive().optional(),
    maxRetries: z.number().int().min(0).max(10).optional(),
    retryBaseDelayMs: z.number().int().min(0).optional(),
    maxRetryAfterMs: z.number().int().min(0).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    maxTokens: maxTokens.optional(),
    contextTokens: contextTokens.optional(),
    /**
     * The temperature of a request that names none, on the PV model whose route this target begins (an operator's
     * setting, as Ollama's Modelfile and vLLM's generation config have it: a small model runs best as its authors
     * recommend). Unset: the contract's 0.7.
     */
    temperature: z.number().min(0).max(2).optional(),
    /** The upstream model reads images: chat's `image_url` and responses' `input_image` parts go to it as given. */
    vision: z.boolean().optional(),
  })
  .strict();

const targetSchema = z.discriminatedUnion('provider', [localTarget, upstreamTarget]);
export type TargetConfig = z.output<typeof targetSchema>;

/** A route reads images when every target of it does: a fallback must take the same request. */
export function routeReadsImages(targets: readonly TargetConfig[]): boolean {
  return targets.length > 0 && targets.every((t) => t.vision === true);
}

/** The temperature of a request naming none on a route: its first target's setting, else undefined (the contract's). */
export function routeTemperature(targets: readonly TargetConfig[]): number | undefined {
  return targets[0]?.temperature;
}

/** Each PV model → ordered targets; models left out keep the default (the local engine). */
export const routingSchema = z
  .object(Object.fromEntries(MODEL_IDS.map((m) => [m, z.array(targetSchema).min(1).optional()])))
  .strict()
  .default({});

export const localEngineSchema = z
  .object({
    /** The library's default thread count is ~1000× slower on 2 cores; 1 is right for small models. */
    threads: z.number().int().min(1).max(256).default(1),
    sequences: z.number().int().min(1).max(64).default(2),
    maxQueue: z.number().int().min(0).max(10_000).default(16),
    /** A queued request's longest wait for a sequence, then 503 SERVER_BUSY with Retry-After; 0: no bound. */
    maxQueueWaitMs: z.number().int().min(0).max(3_600_000).default(30_000),
    contextSize: z.number().int().min(64).optional(),
  })
  .strict()
  .default({ threads: 1, sequences: 2, maxQueue: 16, maxQueueWaitMs: 30_000 });

/**
 * The default answer budget of each PV model on the local engine (a request's `max_tokens` wins). The
 * default local model is SmolLM2-135M-Instruct (scripts/setup), which writes ~20–40 tokens/s on two
 * cores: PV-TURBO stays short so it answers within seconds; PV-STANDARD allows a paragraph or two;
 * PV-CODEX room for a function and its explanation; PV-ADVANCED the longest analysis. All fit the
 * engine's 4096-token context with room for the prompt. docs/routing.md explains them.
 */
const DEFAULT_LOCAL_MAX_TOKENS: Readonly<Record<ModelId, number>> = {
  'PV-TURBO': 256,
  'PV-STANDARD': 512,
  'PV-CODEX': 1024,
  'PV-ADVANCED': 1536,
};

/** All four PV models on the local engine, each with its class's token budget. */
export function resolveRouting(
  configured: Partial<Record<string, TargetConfig[] | undefined>>,
): Record<string, TargetConfig[]> {
  const out: Record<string, TargetConfig[]> = {};
  for (const model of MODEL_IDS) {
    out[model] = configured[model] ?? [
      { provider: 'local', model: 'local', maxTokens: DEFAULT_LOCAL_MAX_TOKENS[model] },
    ];
  }
  return out;
}
