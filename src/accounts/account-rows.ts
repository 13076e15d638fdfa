import { isTier } from '../kernel/index.js';
import type { Row } from '../storage/index.js';
import type { Account } from './types.js';

/** The account half of a charge: never below zero, checked and taken in one statement. */
export const CHARGE_ACCOUNT =
  'UPDATE accounts SET credits = credits - $2 WHERE id = $1 AND credits >= $2 RETURNING credits';

/** An account's row as both SQL dialects read and write it. */
export const ACCOUNT_COLUMNS = 'id, email, tier, credits, created_at, log_content';

export function toAccount(row: Row): Account {
  const tier = row.tier;
  if (!isTier(tier)) throw new Error(`account ${String(row.id)} has unknown tier ${String(tier)}`);
  return {
    id: String(row.id),
    email: String(row.email),
    tier,
    credits: Number(row.credits),
    createdAt: Number(row.created_at),
    logContent: Boolean(row.log_content),
  };
}

/**
 * The statement of the embedded database alone, with better-sqlite3's positional `?`: the credit ledger's
 * write of its deltas (`applyCreditDeltas`). PostgreSQL has no counterpart (every charge there is one
 * statement), so it is not a per-dialect pair.
 */
export const SQLITE_ONLY = {
  addDelta: 'UPDATE accounts SET credits = credits + ? WHERE id = ?',
  /** A key's spend delta in the period starting at the first `?` (a row of an earlier period starts afresh). */
  addSpend: `UPDATE api_keys SET spend_period_start = ?,
    spend_credits = MAX(CASE WHEN spend_period_start = ? THEN spend_credits + ? ELSE ? END, 0) WHERE id = ?`,
} as const;

/** A charge's note (ChargeNote) the credit ledger writes with the charge: its statement and parameters. */
export interface WrittenNote {
  sql: string;
  params: unknown[];
}

/** A key's spend the credit ledger has not written yet. */
export interface SpendDelta {
  keyId: string;
  periodStart: number;
  delta: number;
}
