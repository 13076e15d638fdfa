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
}

/** Who is calling: resolved from an API key on every authenticated request. */
export interface Principal {
  account: Account;
  key: ApiKeyRecord;
}
