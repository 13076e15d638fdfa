/** The four account tiers (docs/decisions.md, "Accounts, keys, tiers"). What each allows lives in src/tiers/. */
export const TIERS = ['free', 'startup', 'business', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export function isTier(value: unknown): value is Tier {
  return typeof value === 'string' && (TIERS as readonly string[]).includes(value);
}
