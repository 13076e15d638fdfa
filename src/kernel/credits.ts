import type { Principal } from './principal.js';

/** Who pays for a request: the account, through the key that made it (its budget is charged too). */
export interface Payer {
  accountId: string;
  keyId?: string;
}

/** Credits given back to an account, and to the key's spend in the period it was counted in. */
export interface CreditRefund {
  accountId: string;
  amount: number;
  keyId?: string;
  keyPeriodStart?: number;
}

/** A charge's outcome: the balance after it, and the refund that undoes it exactly. */
export type Charged = { ok: true; balance: number; refund: CreditRefund } | { ok: false; balance: number };

/**
 * A statement written atomically with a charge (the same transaction on PostgreSQL, the same turn commit on the
 * embedded ledger), given the refund that undoes the charge: the Idempotency-Key claim notes what its request
 * charged, so a process killed after the charge never leaves a charge its retry cannot refund.
 */
export interface ChargeNote {
  /** A statement that returns a row when it wrote the note (`RETURNING`). */
  sql: string;
  params(refund: CreditRefund): unknown[];
  /**
   * The refusal when the note wrote nothing (its claim is no longer this attempt's): the charge is rolled back
   * with it, so an attempt that lost its claim can never charge beside the one that took it over.
   */
  lost(): Error;
}

/**
 * Credits as a paid operation sees them: an atomic check-and-charge of the account and the key's budget (never
 * below zero, never past the budget: a key's budget refuses with 402 KEY_BUDGET_EXCEEDED) and its refund.
 */
export interface CreditsPort {
  charge(payer: Payer, amount: number, note?: ChargeNote): Promise<Charged>;
  refund(refund: CreditRefund): Promise<void>;
}

export function payerOf(principal: Principal): Payer {
  return { accountId: principal.account.id, keyId: principal.key.id };
}
