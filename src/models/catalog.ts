import type { Schema } from '../http/index.js';
import { EMBEDDING_MODEL_ID, type ModelId } from '../kernel/index.js';

export interface ModelInfo {
  id: ModelId;
  speedClass: string;
  quality: string;
  creditsPerRequest: number;
  intendedUse: string;
}

/** The four tiers of the interface (Resources → Model). */
export const MODELS: Readonly<Record<ModelId, ModelInfo>> = {
  'PV-TURBO': {
    id: 'PV-TURBO',
    speedClass: 'fastest, under 1 s',
    quality: 'good',
    creditsPerRequest: 1,
    intendedUse: 'chat, quick answers, real-time',
  },
  'PV-STANDARD': {
    id: 'PV-STANDARD',
    speedClass: '1-2 s',
    quality: 'better',
    creditsPerRequest: 2,
    intendedUse: 'general tasks, balanced',
  },
  'PV-ADVANCED': {
    id: 'PV-ADVANCED',
    speedClass: '2-4 s',
    quality: 'best',
    creditsPerRequest: 5,
    intendedUse: 'complex reasoning, analysis',
  },
  'PV-CODEX': {
    id: 'PV-CODEX',
    speedClass: '1-2 s',
    quality: 'excellent',
    creditsPerRequest: 3,
    intendedUse: 'code generation, debugging',
  },
};

/** 2026-01-01: a fixed `created` so listings are stable across restarts, as OpenAI's are. */
const CATALOG_CREATED = 1_767_225_600;

/** What a request on `model` costs; 0 for a name outside the catalogue (validation refuses those first). */
export function creditsPerRequest(model: string): number {
  return (MODELS as Partial<Record<string, ModelInfo>>)[model]?.creditsPerRequest ?? 0;
}

/** A chat model's limits on the route it takes now (routing decides them, not the catalogue). */
export interface RouteLimits {
  /** Tokens a request may hold, prompt and answer: the smallest window among the route's targets. */
  contextWindow: number;
  /** The answer budget of the route when a request sets none. */
  maxOutputTokens: number;
  /** Every target of the route reads images (declared `vision`): `vision` among its capabilities. */
  readsImages?: boolean;
}

/** What every chat route serves (the local engine and an OpenAI-compatible upstream alike). */
const CHAT_CAPABILITIES: Schema<'Model'>['capabilities'] = ['streaming', 'tools', 'structured_output'];

export function modelResource(
  model: ModelInfo,
  available: boolean,
  limits: RouteLimits,
  servedBy: Schema<'ModelServer'>,
): Schema<'Model'> {
  return {
    id: model.id,
    object: 'model',
    created: CATALOG_CREATED,
    owned_by: 'pvai',
    speed_class: model.speedClass,
    quality: model.quality,
    credits_per_request: model.creditsPerRequest,
    intended_use: model.intendedUse,
    available,
    kind: 'chat',
    context_window: limits.contextWindow,
    max_output_tokens: limits.maxOutputTokens,
    served_by: servedBy,
    capabilities: limits.readsImages ? [...CHAT_CAPABILITIES, 'vision'] : [...CHAT_CAPABILITIES],
  };
}

/**
 * Embeddings cost 1 credit per started 10,000 input tokens, at least 1 a request: a credit buys about the machine
 * time a chat credit does. Measured on the 2-core machine (one thread each): all-MiniLM-L6-v2 read 2,500–3,700
 * tokens/s (10,000 tokens: 2.7–4 s); a 1-credit PV-TURBO answer is SmolLM2-135M writing up to 256 tokens at
 * ~145 tokens/s (1.75 s) after its prompt (1,000 prompt tokens: 4 s). So a query or a batch of short texts costs
 * what the cheapest chat answer does, and the largest request (2,048 texts of 509 tokens) 105 credits.
 */
const EMBEDDING_TOKENS_PER_CREDIT = 10_000;

/** What an embeddings request of `tokens` input tokens costs. */
export function embeddingCredits(tokens: number): number {
  return Math.max(1, Math.ceil(tokens / EMBEDDING_TOKENS_PER_CREDIT));
}

/** The embedding model's window and vector length, from the engine that serves it. */
export interface EmbeddingLimits {
  /** The model's window (one text with the model's own start and end tokens). */
  contextWindow: number;
  dimensions: number;
}

/**
 * PV-EMBED as `/z1/models` lists it. Every tier may embed (RAG embeds on every tier already; rate limits and
 * credits bound the volume), so it is available to all.
 */
export function embeddingModelResource(limits: EmbeddingLimits, servedBy: Schema<'ModelServer'>): Schema<'Model'> {
  return {
    id: EMBEDDING_MODEL_ID,
    object: 'model',
    created: CATALOG_CREATED,
    owned_by: 'pvai',
    speed_class: 'fastest, milliseconds a text',
    quality: 'good for retrieval and similarity',
    credits_per_request: embeddingCredits(0),
    intended_use: 'embeddings for search, retrieval and clustering',
    available: true,
    kind: 'embedding',
    context_window: limits.contextWindow,
    // It answers with vectors, never tokens.
    max_output_tokens: 0,
    dimensions: limits.dimensions,
    served_by: servedBy,
    capabilities: ['embeddings'],
  };
}
