import type { TierRules } from '../config/index.js';

export const MODEL_IDS = ['PV-TURBO', 'PV-STANDARD', 'PV-ADVANCED', 'PV-CODEX'] as const;
export type ModelId = (typeof MODEL_IDS)[number];

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

export function isModelId(value: string): value is ModelId {
  return (MODEL_IDS as readonly string[]).includes(value);
}

export function modelResource(model: ModelInfo, rules: TierRules) {
  return {
    id: model.id,
    object: 'model' as const,
    created: CATALOG_CREATED,
    owned_by: 'pvai',
    speed_class: model.speedClass,
    quality: model.quality,
    credits_per_request: model.creditsPerRequest,
    intended_use: model.intendedUse,
    available: rules.models.includes(model.id),
  };
}
