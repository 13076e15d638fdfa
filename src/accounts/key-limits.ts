import { AppError } from '../errors/index.js';
import { EMBEDDING_MODEL_ID, MODEL_IDS } from '../kernel/index.js';
import type { ApiKeyRecord, KeyChanges } from './types.js';

/** A key's limits as the admin API, the dashboard and the CLI send them (JSON merge: null clears a field). */
export interface KeyLimitsInput {
  name?: unknown;
  budget?: unknown;
  rate_limits?: unknown;
  models?: unknown;
  expires_at?: unknown;
  metadata?: unknown;
}

/** The ceilings a key's own rate limits may not pass: its tier's. */
export interface TierCeilings {
  tier: string;
  rpm: number;
  rpd: number;
}

/** OpenAI's metadata limits: 16 pairs, keys of 64 characters, values of 512. */
const METADATA_LIMITS = { pairs: 16, keyChars: 64, valueChars: 512 } as const;
/** The largest budget: the largest balance an account may hold. */
const MAX_BUDGET = 1_000_000_000_000;
const ALLOWED_MODELS: readonly string[] = [...MODEL_IDS, EMBEDDING_MODEL_ID];

function invalid(field: string, message: string, details: Record<string, unknown> = {}): AppError {
  return new AppError('INVALID_PARAMETER', message, { field, reason: message, ...details });
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function whole(field: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw invalid(field, `${field} must be a whole number from ${min} to ${max}`, { min, max });
  }
  return v;
}

function readBudget(v: unknown): KeyChanges['budget'] {
  if (v === null) return null;
  if (!isObject(v)) throw invalid('budget', 'budget must be an object { credits, period }, or null to remove it');
  const credits = whole('budget.credits', v.credits, 0, MAX_BUDGET);
  const period = v.period ?? 'month';
  if (period !== 'month' && period !== 'total') {
    throw invalid('budget.period', 'budget.period must be "month" (per UTC calendar month) or "total"', {
      allowed: ['month', 'total'],
    });
  }
  return { credits, period };
}

function readRateLimits(v: unknown, tier: TierCeilings): KeyChanges['rateLimits'] {
  if (v === null) return null;
  if (!isObject(v)) throw invalid('rate_limits', 'rate_limits must be an object { rpm, rpd }, or null to remove it');
  const ceiling = (name: 'rpm' | 'rpd'): number | null => {
    const value = v[name];
    if (value === undefined || value === null) return null;
    const field = `rate_limits.${name}`;
    const n = whole(field, value, 1, Number.MAX_SAFE_INTEGER);
    if (n > tier[name]) {
      throw invalid(field, `${field} is at most the ${tier.tier} tier's ${tier[name]}`, { max: tier[name] });
    }
    return n;
  };
  const rpm = ceiling('rpm');
  const rpd = ceiling('rpd');
  return rpm === null && rpd === null ? null : { rpm, rpd };
}

function readModels(v: unknown): KeyChanges['models'] {
  if (v === null) return null;
  if (!Array.isArray(v) || v.length === 0) {
    throw invalid('models', 'models must be a non-empty list of model ids, or null to allow every model of the tier');
  }
  for (const [i, id] of v.entries()) {
    if (typeof id !== 'string' || !ALLOWED_MODELS.includes(id)) {
      throw invalid(
        `models[${i}]`,
        `models[${i}] is ${JSON.stringify(id)}; a model is one of ${ALLOWED_MODELS.join(', ')}`,
        {
          allowed: ALLOWED_MODELS,
        },
      );
    }
  }
  return [...new Set(v as string[])];
}

function readExpiry(v: unknown, now: number): number | null {
  if (v === null) return null;
  const at = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  if (Number.isNaN(at))
    throw invalid('expires_at', 'expires_at must be an ISO 8601 instant, e.g. 2027-01-31T00:00:00Z');
  if (at <= now) {
    throw invalid('expires_at', `expires_at ${new Date(at).toISOString()} is not in the future`, {
      now: new Date(now).toISOString(),
    });
  }
  return at;
}

function readMetadata(v: unknown): KeyChanges['metadata'] {
  if (v === null) return null;
  if (!isObject(v)) throw invalid('metadata', 'metadata must be an object of string values, or null to remove it');
  const entries = Object.entries(v);
  const { pairs, keyChars, valueChars } = METADATA_LIMITS;
  if (entries.length > pairs) throw invalid('metadata', `metadata holds at most ${pairs} pairs`, { max: pairs });
  // Counted in code points, as the contract's maxLength counts them (an emoji is one character, not two).
  const chars = (text: string) => [...text].length;
  for (const [key, value] of entries) {
    if (key.length === 0 || chars(key) > keyChars) {
      throw invalid(
        'metadata',
        `metadata keys are 1 to ${keyChars} characters; ${JSON.stringify(key.slice(0, 80))} is not`,
      );
    }
    if (typeof value !== 'string' || chars(value) > valueChars) {
      throw invalid(`metadata.${key}`, `metadata.${key} must be a string of at most ${valueChars} characters`, {
        max: valueChars,
      });
    }
  }
  return Object.fromEntries(entries) as Record<string, string>;
}

function readName(v: unknown): string | null {
  if (v === null) return null;
  if (typeof v !== 'string' || v.length === 0 || [...v].length > 128)
    throw invalid('name', 'name is 1 to 128 characters');
  return v;
}

/**
 * A key's limits as sent, checked and read: the one validation of the admin API, the dashboard and the CLI. Absent
 * fields stay absent (unchanged), null clears. Refusals are 400 INVALID_PARAMETER naming the field.
 */
export function readKeyLimits(input: KeyLimitsInput, tier: TierCeilings, now: number): KeyChanges {
  const changes: KeyChanges = {};
  if (input.name !== undefined) changes.name = readName(input.name);
  if (input.budget !== undefined) changes.budget = readBudget(input.budget);
  if (input.rate_limits !== undefined) changes.rateLimits = readRateLimits(input.rate_limits, tier);
  if (input.models !== undefined) changes.models = readModels(input.models);
  if (input.expires_at !== undefined) changes.expiresAt = readExpiry(input.expires_at, now);
  if (input.metadata !== undefined) changes.metadata = readMetadata(input.metadata);
  return changes;
}

/**
 * A PATCH body merged into the key as RFC 7386 does for `budget` and `rate_limits` (a field left out keeps its
 * value: `{"budget": {"credits": 80}}` keeps the period); `models` and `metadata` are replaced whole, as OpenAI
 * replaces metadata.
 */
export function mergeKeyPatch(input: KeyLimitsInput, key: ApiKeyRecord): KeyLimitsInput {
  const merged = { ...input };
  if (isObject(input.budget) && key.budget) merged.budget = { ...key.budget, ...input.budget };
  if (isObject(input.rate_limits) && key.rateLimits) merged.rate_limits = { ...key.rateLimits, ...input.rate_limits };
  return merged;
}
