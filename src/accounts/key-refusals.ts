import { AppError } from '../errors/index.js';
import type { Payer } from '../kernel/index.js';
import { spendPeriodEnd } from './key-rows.js';
import type { ApiKeyRecord, Charged, ChargeResult, KeyBudgetRefusal, Refund } from './types.js';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** 402 KEY_BUDGET_EXCEEDED: names the key, its budget and period, what it spent, and when the budget resets. */
function keyBudgetExceeded(name: string | null, keyId: string, required: number, refusal: KeyBudgetRefusal) {
  const { budget, spent, periodStart } = refusal;
  const resets = spendPeriodEnd(budget.period, periodStart);
  const label = name === null ? `Key ${keyId}` : `Key "${name}" (${keyId})`;
  const span = budget.period === 'month' ? 'this UTC month' : 'in total';
  const when =
    resets === null
      ? 'A total budget does not reset: raise it (PATCH /admin/keys/{key_id}) or use another key'
      : `It resets at ${new Date(resets).toISOString()}`;
  return new AppError(
    'KEY_BUDGET_EXCEEDED',
    `${label} has spent ${plural(spent, 'credit')} of its budget of ${budget.credits} ${span}; this request costs ` +
      `${required}. ${when}`,
    {
      key_id: keyId,
      budget: budget.credits,
      period: budget.period,
      spent,
      required,
      resets_at: resets === null ? null : new Date(resets).toISOString(),
    },
  );
}

/** 401 API_KEY_EXPIRED: the key is refused like a revoked one, and the message says when it expired. */
export function keyExpired(keyId: string, expiresAt: number): AppError {
  const at = new Date(expiresAt).toISOString();
  return new AppError('API_KEY_EXPIRED', `The API key ${keyId} expired at ${at}; create or rotate a key`, {
    key_id: keyId,
    expired_at: at,
  });
}

/** The refund that undoes a charge exactly: the account, and the key's spend in the period it counted in. */
export function refundOf(payer: Payer, amount: number, keyPeriodStart: number | undefined): Refund {
  const refund: Refund = { accountId: payer.accountId, amount };
  if (payer.keyId !== undefined && keyPeriodStart !== undefined) {
    Object.assign(refund, { keyId: payer.keyId, keyPeriodStart });
  }
  return refund;
}

/**
 * A store's charge as a paid operation takes it: the refund that undoes it exactly (account, and the key's spend in
 * the period it counted in), or the refusal (a key's budget: thrown as KEY_BUDGET_EXCEEDED, naming the key).
 */
export async function charged(
  payer: Payer,
  amount: number,
  result: ChargeResult,
  keyOf: (id: string) => Promise<ApiKeyRecord | undefined>,
): Promise<Charged> {
  if (result.ok) return { ok: true, balance: result.balance, refund: refundOf(payer, amount, result.keyPeriodStart) };
  if (result.keyBudget && payer.keyId !== undefined) {
    const key = await keyOf(payer.keyId);
    throw keyBudgetExceeded(key?.name ?? null, payer.keyId, amount, result.keyBudget);
  }
  return { ok: false, balance: result.balance };
}
