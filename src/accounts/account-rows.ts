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
