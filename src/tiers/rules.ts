import { MODEL_IDS, type Tier } from '../kernel/index.js';

/** Tier rules of docs/decisions.md; the numeric limits are defaults that configuration may change. */

export interface TierRules {
  /** Requests per sliding minute, per UTC day and per UTC calendar month. */
  rpm: number;
  rpd: number;
  monthly: number;
  models: readonly string[];
  maxRagK: number;
  codeTimeoutMaxSeconds: number;
  codeTimeoutDefaultSeconds: number;
  slaEndpoint: boolean;
}

const ALL_MODELS = MODEL_IDS;

export const DEFAULT_TIER_RULES: Readonly<Record<Tier, TierRules>> = {
  free: {
    rpm: 10,
    rpd: 100,
    monthly: 3_000,
    models: ['PV-TURBO', 'PV-STANDARD'],
    maxRagK: 5,
    codeTimeoutMaxSeconds: 5,
    codeTimeoutDefaultSeconds: 5,
    slaEndpoint: false,
  },
  startup: {
    rpm: 60,
    rpd: 1_000,
    monthly: 30_000,
    models: ALL_MODELS,
    maxRagK: 10,
    codeTimeoutMaxSeconds: 15,
    codeTimeoutDefaultSeconds: 15,
    slaEndpoint: true,
  },
  business: {
    rpm: 150,
    rpd: 5_000,
    monthly: 150_000,
    models: ALL_MODELS,
    maxRagK: 100,
    codeTimeoutMaxSeconds: 60,
    codeTimeoutDefaultSeconds: 60,
    slaEndpoint: true,
  },
  enterprise: {
    rpm: 300,
    rpd: 10_000,
    monthly: 300_000,
    models: ALL_MODELS,
    maxRagK: 100,
    codeTimeoutMaxSeconds: 120,
    codeTimeoutDefaultSeconds: 120,
    slaEndpoint: true,
  },
};
