import type { Tier } from './tiers.js';

export interface Account {
  id: string;
  email: string;
  tier: Tier;
  credits: number;
  createdAt: number;
  /** Request logs keep the input and answer text of chat and responses (off when absent). */
  logContent?: boolean;
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  prefix: string;
  name: string | null;
  /** The end user the key is bound to: requests through it act for them alone. Null: bound to none. */
  userId: string | null;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  /** The key's own limits (absent: none, as on a record built before they existed). */
  budget?: KeyBudget | null;
  /** Credits charged through the key in its budget's period (no budget: the UTC calendar month). */
  spend?: KeySpend;
  rateLimits?: KeyRateLimits | null;
  /** The model ids the key may call; null: every model its tier allows. */
  models?: readonly string[] | null;
  /** After this instant (ms) the key is refused. */
  expiresAt?: number | null;
  metadata?: Readonly<Record<string, string>> | null;
}

export type KeyBudgetPeriod = 'month' | 'total';

/** Credits a key may spend per UTC calendar month, or in all. */
export interface KeyBudget {
  credits: number;
  period: KeyBudgetPeriod;
}

/** What a key spent in the period starting at `periodStart` (ms; 0 for a `total` budget). */
interface KeySpend {
  credits: number;
  periodStart: number;
}

/** A key's own ceilings, each at most its tier's; null: the tier's alone. */
export interface KeyRateLimits {
  rpm: number | null;
  rpd: number | null;
}

/** Who is calling: resolved from an API key on every authenticated request. */
export interface Principal {
  account: Account;
  key: ApiKeyRecord;
}
