import { AppError } from '../errors/index.js';

/**
 * The highest balance an account may hold: the contract's `CreditBalance` maximum (10^12). Past 2^32, so
 * clients read balances as 64-bit integers; far below 2^53 − 1, so a balance plus a grant stays exact in
 * JavaScript numbers and in both SQL dialects. A creation or grant that would pass it is refused.
 */
export const MAX_CREDIT_BALANCE = 1_000_000_000_000;

export function overCeiling(field: 'credits' | 'amount', balance: number): AppError {
  return new AppError('INVALID_PARAMETER', `a credit balance is at most ${MAX_CREDIT_BALANCE}`, {
    field,
    reason: `the balance would pass ${MAX_CREDIT_BALANCE}`,
    max_balance: MAX_CREDIT_BALANCE,
    balance,
  });
}
