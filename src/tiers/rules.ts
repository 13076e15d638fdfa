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
  /** The SLA report's targets: availability at least this (0..1), p95 latency at most this. */
  slaAvailabilityTarget: number;
  slaLatencyTargetMs: number;
  /** Files API: the largest file, the account's stored bytes, and how many files and vector stores. */
  maxFileBytes: number;
  maxStoredBytes: number;
  maxFiles: number;
  maxVectorStores: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

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
    slaAvailabilityTarget: 0.99,
    slaLatencyTargetMs: 30_000,
    maxFileBytes: 16 * MiB,
    maxStoredBytes: 256 * MiB,
    maxFiles: 100,
    maxVectorStores: 10,
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
    slaAvailabilityTarget: 0.99,
    slaLatencyTargetMs: 20_000,
    maxFileBytes: 64 * MiB,
    maxStoredBytes: 2 * GiB,
    maxFiles: 1_000,
    maxVectorStores: 100,
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
    slaAvailabilityTarget: 0.995,
    slaLatencyTargetMs: 15_000,
    maxFileBytes: 512 * MiB,
    maxStoredBytes: 20 * GiB,
    maxFiles: 10_000,
    maxVectorStores: 1_000,
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
    slaAvailabilityTarget: 0.999,
    slaLatencyTargetMs: 10_000,
    maxFileBytes: 512 * MiB,
    maxStoredBytes: 100 * GiB,
    maxFiles: 100_000,
    maxVectorStores: 10_000,
  },
};
