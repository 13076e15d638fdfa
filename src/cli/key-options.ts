import type { Command } from 'commander';
import { AppError } from '../errors/index.js';

/** The options of `pvai keys create` and `pvai keys update` that set a key's limits. */
export interface KeyLimitOptions {
  name?: string;
  budget?: string;
  budgetPeriod?: string;
  rpm?: string;
  rpd?: string;
  models?: string;
  expires?: string;
  metadata?: string[];
}

/** `none` clears a field (update), as `null` does in the admin API's PATCH. */
const NONE = 'none';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Adds the limit options to a keys command. */
export function keyLimitOptions(command: Command): Command {
  return command
    .option('--name <name>')
    .option('--budget <credits>', `credits the key may spend per period ("${NONE}": no budget)`)
    .option('--budget-period <period>', 'month (per UTC calendar month, the default) or total')
    .option('--rpm <n>', `the key's own requests per minute, at most its tier's ("${NONE}": the tier's)`)
    .option('--rpd <n>', `the key's own requests per day, at most its tier's`)
    .option('--models <ids>', `models the key may call, comma-separated, e.g. PV-TURBO,PV-EMBED ("${NONE}": all)`)
    .option('--expires <date>', `when the key stops working: 2027-01-31 or an ISO instant ("${NONE}": never)`)
    .option('--metadata <key=value>', `a pair of your own, repeatable ("${NONE}": remove all)`, collect);
}

/** A number as JSON would carry it: the contract then refuses "ten" as the admin API does. */
function jsonNumber(value: string): number | string {
  return /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(value) ? Number(value) : value;
}

function invalid(option: string, message: string): AppError {
  return new AppError('INVALID_PARAMETER', `${option}: ${message}`, { field: option.replace(/^--/, '') });
}

function expiry(value: string): string | null {
  if (value === NONE) return null;
  // A bare date is its first instant, UTC.
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
}

function metadata(pairs: string[]): Record<string, string> | null {
  if (pairs.length === 1 && pairs[0] === NONE) return null;
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw invalid('--metadata', `"${pair}" is not key=value (e.g. --metadata team=web)`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return out;
}

/**
 * The admin API's body (KeyCreateRequest / KeyUpdateRequest) for the options given: the contract and the service
 * then check it exactly as they check the API's.
 */
export function keyLimitsBody(o: KeyLimitOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (o.name !== undefined) body.name = o.name === NONE ? null : o.name;
  if (o.budgetPeriod !== undefined && o.budget === undefined) {
    throw invalid('--budget-period', 'give the budget too, e.g. --budget 500 --budget-period total');
  }
  if (o.budget !== undefined) {
    body.budget =
      o.budget === NONE
        ? null
        : { credits: jsonNumber(o.budget), ...(o.budgetPeriod !== undefined ? { period: o.budgetPeriod } : {}) };
  }
  if (o.rpm !== undefined || o.rpd !== undefined) {
    body.rate_limits =
      o.rpm === NONE
        ? null
        : {
            ...(o.rpm !== undefined ? { rpm: jsonNumber(o.rpm) } : {}),
            ...(o.rpd !== undefined ? { rpd: jsonNumber(o.rpd) } : {}),
          };
  }
  if (o.models !== undefined) body.models = o.models === NONE ? null : o.models.split(',').map((m) => m.trim());
  if (o.expires !== undefined) body.expires_at = expiry(o.expires);
  if (o.metadata !== undefined) body.metadata = metadata(o.metadata);
  return body;
}

/** The fields of a key's limits, as the admin API shows them. */
export const KEY_LIMIT_FIELDS = ['budget', 'rate_limits', 'models', 'expires_at', 'metadata'] as const;

interface ShownKey {
  budget: { credits: number; period?: string } | null;
  spend: { credits: number };
  rate_limits: { rpm?: number | null; rpd?: number | null } | null;
  models: readonly string[] | null;
  expires_at: string | null;
  metadata: Record<string, string> | null;
}

/** One line per limit set, for the text output. */
export function describeLimits(key: ShownKey): string {
  const lines: string[] = [];
  if (key.budget)
    lines.push(`budget: ${key.spend.credits} of ${key.budget.credits} credits spent (${key.budget.period})`);
  if (key.rate_limits) {
    const { rpm, rpd } = key.rate_limits;
    lines.push(`rate limits: ${rpm ?? "tier's"} per minute, ${rpd ?? "tier's"} per day`);
  }
  if (key.models) lines.push(`models: ${key.models.join(', ')}`);
  if (key.expires_at) lines.push(`expires: ${key.expires_at}`);
  if (key.metadata)
    lines.push(
      `metadata: ${Object.entries(key.metadata)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`,
    );
  return lines.map((line) => `\n  ${line}`).join('');
}
