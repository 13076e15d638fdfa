import type { KeyBudgetPeriod } from '../kernel/index.js';
import type { Row } from '../storage/index.js';
import type { ApiKeyRecord, KeyChanges } from './types.js';

/** Every column of a key row but its hash, in the order toKey reads them. */
const COLUMNS = [
  'id',
  'account_id',
  'prefix',
  'name',
  'user_id',
  'created_at',
  'last_used_at',
  'revoked_at',
  'budget_credits',
  'budget_period',
  'spend_credits',
  'spend_period_start',
  'rpm',
  'rpd',
  'models',
  'expires_at',
  'metadata',
] as const;

export const KEY_COLUMNS = COLUMNS.join(', ');
/** The same columns of the table aliased `k`. */
export const KEY_COLUMNS_OF_K = COLUMNS.map((c) => `k.${c}`).join(', ');

const nullableNumber = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const nullableString = (v: unknown) => (v === null || v === undefined ? null : String(v));

function parsed<T>(v: unknown): T | null {
  return typeof v === 'string' ? (JSON.parse(v) as T) : null;
}

export function toKey(row: Row): ApiKeyRecord {
  const budget = nullableNumber(row.budget_credits);
  const rpm = nullableNumber(row.rpm);
  const rpd = nullableNumber(row.rpd);
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    prefix: String(row.prefix),
    name: nullableString(row.name),
    userId: nullableString(row.user_id),
    createdAt: Number(row.created_at),
    lastUsedAt: nullableNumber(row.last_used_at),
    revokedAt: nullableNumber(row.revoked_at),
    budget: budget === null ? null : { credits: budget, period: row.budget_period === 'total' ? 'total' : 'month' },
    spend: { credits: Number(row.spend_credits ?? 0), periodStart: Number(row.spend_period_start ?? 0) },
    rateLimits: rpm === null && rpd === null ? null : { rpm, rpd },
    models: parsed<string[]>(row.models),
    expiresAt: nullableNumber(row.expires_at),
    metadata: parsed<Record<string, string>>(row.metadata),
  };
}

/** The first instant of the period a key's spend counts in at `now`: 0 for a `total` budget, else the UTC month's. */
export function spendPeriodStart(period: KeyBudgetPeriod | null | undefined, now: number): number {
  if (period === 'total') return 0;
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** When the period starting at `periodStart` ends (null: a `total` budget never resets). */
export function spendPeriodEnd(period: KeyBudgetPeriod, periodStart: number): number | null {
  if (period === 'total') return null;
  const d = new Date(periodStart);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** The SET list and parameters of an update (`$2`… after the key's id at `$1`). */
export function keyUpdateSql(changes: KeyChanges): { set: string[]; params: unknown[] } {
  const set: string[] = [];
  const params: unknown[] = [];
  const put = (column: string, value: unknown) => {
    params.push(value);
    set.push(`${column} = $${params.length + 1}`);
  };
  if (changes.name !== undefined) put('name', changes.name);
  if (changes.budget !== undefined) {
    put('budget_credits', changes.budget?.credits ?? null);
    put('budget_period', changes.budget?.period ?? null);
  }
  if (changes.rateLimits !== undefined) {
    put('rpm', changes.rateLimits?.rpm ?? null);
    put('rpd', changes.rateLimits?.rpd ?? null);
  }
  if (changes.models !== undefined) put('models', changes.models ? JSON.stringify(changes.models) : null);
  if (changes.expiresAt !== undefined) put('expires_at', changes.expiresAt);
  if (changes.metadata !== undefined) put('metadata', changes.metadata ? JSON.stringify(changes.metadata) : null);
  return { set, params };
}

/** The columns of a new key's limits, in insertion order (after the seven of the key itself). */
export function keyLimitValues(key: ApiKeyRecord): unknown[] {
  return [
    key.budget?.credits ?? null,
    key.budget?.period ?? null,
    key.spend?.credits ?? 0,
    key.spend?.periodStart ?? 0,
    key.rateLimits?.rpm ?? null,
    key.rateLimits?.rpd ?? null,
    key.models ? JSON.stringify(key.models) : null,
    key.expiresAt ?? null,
    key.metadata ? JSON.stringify(key.metadata) : null,
  ];
}

/*
 * The period a key's spend counts in at the instant whose UTC month starts at parameter `month`: 0 for a `total`
 * budget, else the month. A spend of an earlier period starts afresh. SET reads the row as it was (both dialects),
 * so a budget check and the new spend agree.
 */
const period = (month: string) => `(CASE WHEN budget_period = 'total' THEN 0 ELSE CAST(${month} AS BIGINT) END)`;
const spent = (month: string) => `(CASE WHEN spend_period_start = ${period(month)} THEN spend_credits ELSE 0 END)`;
const PERIOD = period('$3');
const SPENT = spent('$3');

/** `$1` the amount, `$2` the key, `$3` the month: counts the spend if the budget allows it; else no row. */
export const CHARGE_KEY = `UPDATE api_keys SET spend_credits = ${SPENT} + $1, spend_period_start = ${PERIOD}
  WHERE id = $2 AND (budget_credits IS NULL OR ${SPENT} + $1 <= budget_credits) RETURNING spend_period_start AS period_start`;

/** `$1` the key, `$2` the month: its budget and what it spent in the period, to word a refusal. */
export const KEY_BUDGET = `SELECT budget_credits, budget_period, ${spent('$2')} AS spent, ${period('$2')} AS period_start
  FROM api_keys WHERE id = $1`;

/**
 * PostgreSQL's one-statement charge of a key without a budget (nearly every request): the account's credits and
 * the key's spend together. `$4` the account. Account row first, then the key's, as every charge and refund locks
 * them (no deadlock between them). `budgeted`: the key has a budget, nothing was done (the transaction decides).
 */
export const CHARGE_UNBUDGETED = `WITH k AS (SELECT budget_credits IS NOT NULL AS budgeted FROM api_keys WHERE id = $2),
  a AS (UPDATE accounts SET credits = credits - $1 WHERE id = $4 AND credits >= $1
          AND NOT EXISTS (SELECT 1 FROM k WHERE budgeted) RETURNING credits),
  s AS (UPDATE api_keys SET spend_credits = ${SPENT} + $1, spend_period_start = ${PERIOD}
          WHERE id = $2 AND EXISTS (SELECT 1 FROM a) RETURNING spend_period_start AS period_start)
  SELECT (SELECT credits FROM a) AS credits, (SELECT period_start FROM s) AS period_start,
         EXISTS (SELECT 1 FROM k WHERE budgeted) AS budgeted`;

/** Gives a refunded charge back to the key's spend, if the period it counted in is still the key's. */
export const REFUND_KEY = `UPDATE api_keys SET spend_credits = CASE WHEN spend_credits > $2 THEN spend_credits - $2 ELSE 0 END
  WHERE id = $1 AND spend_period_start = $3`;
