import type { Schema } from '../http/index.js';
import type { ModelId } from '../kernel/index.js';

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
}

/** What every chat route serves (the local engine and an OpenAI-compatible upstream alike). */
const CHAT_CAPABILITIES: Schema<'Model'>['capabilities'] = ['streaming', 'tools', 'structured_output'];

export function modelResource(model: ModelInfo, available: boolean, limits: RouteLimits): Schema<'Model'> {
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
    capabilities: [...CHAT_CAPABILITIES],
  };
}
