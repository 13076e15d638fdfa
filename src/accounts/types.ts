import type {
  Account,
  ApiKeyRecord,
  Charged,
  ChargeNote,
  CreditRefund,
  CreditsPort,
  KeyBudget,
  KeyRateLimits,
  Principal,
  Tier,
} from '../kernel/index.js';

export type { Account, ApiKeyRecord, Charged, ChargeNote, CreditsPort, KeyBudget, Principal };

export interface NewAccount {
  email: string;
  tier: Tier;
  credits: number;
  passwordHash: string | null;
}

/** The key a charge goes through, and the instant that places it in its budget's period. */
export interface KeyCharge {
  id: string;
  now: number;
}

/** A key's budget that refused a charge, and what it had spent in the period (starting at `periodStart`). */
export interface KeyBudgetRefusal {
  budget: KeyBudget;
  spent: number;
  periodStart: number;
}

/**
 * A charge's outcome. Through a key, `keyPeriodStart` is the period its spend was counted in (a refund gives it
 * back there); refused by the key's budget, `keyBudget` says so.
 */
export type ChargeResult =
  | { ok: true; balance: number; keyPeriodStart?: number }
  | { ok: false; balance: number; keyBudget?: KeyBudgetRefusal };

/** Credits given back to an account (and the key's spend): the kernel's CreditRefund. */
export type Refund = CreditRefund;

/** A key's limits as stored: each field null for none. */
interface KeyLimitsRecord {
  budget: KeyBudget | null;
  rateLimits: KeyRateLimits | null;
  models: readonly string[] | null;
  expiresAt: number | null;
  metadata: Readonly<Record<string, string>> | null;
}

/** The fields an update sets (absent: unchanged; null: cleared). */
export type KeyChanges = Partial<KeyLimitsRecord & { name: string | null }>;

export interface AccountStore {
  createAccount(input: NewAccount, now: number): Promise<Account>;
  getAccount(id: string): Promise<Account | undefined>;
  listAccounts(): Promise<Account[]>;
  setTier(id: string, tier: Tier): Promise<Account | undefined>;
  /** Turns the keeping of request text in the request logs on or off. */
  setLogContent(id: string, on: boolean): Promise<Account | undefined>;
  /** Adds credits unless the balance would pass `maxBalance`; undefined when nothing was added (or no account). */
  addCredits(id: string, amount: number, maxBalance: number): Promise<Account | undefined>;
  /** Atomic check-and-charge: never lets the balance go below zero, across processes too. */
  /** Through a key: its budget is checked and its spend counted in the same atomic step. */
  /** With a note: the note's statement is written in the same atomic step (only when the charge is taken). */
  chargeCredits(id: string, amount: number, key?: KeyCharge, note?: ChargeNote): Promise<ChargeResult>;
  /** With a key: its spend in `keyPeriodStart`'s period is given back too (nothing once that period is over). */
  refundCredits(id: string, amount: number, key?: { id: string; periodStart: number }): Promise<void>;
  /**
   * PostgreSQL: refunds in one transaction, written once per `batchId` (a retry after a lost COMMIT answer adds
   * nothing). Absent where refunds never meet an absent engine (embedded SQLite's credit ledger).
   */
  refundMany?(refunds: readonly Refund[], batchId: string): Promise<void>;
  insertKey(key: ApiKeyRecord, hash: string): Promise<void>;
  getKey(id: string): Promise<ApiKeyRecord | undefined>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  revokeKey(id: string, now: number): Promise<ApiKeyRecord | undefined>;
  /**
   * Sets the fields given; a budget whose period changes starts its spend afresh (`periodStart` the new period's).
   * Undefined: no such key.
   */
  updateKey(id: string, changes: KeyChanges, periodStart: number): Promise<ApiKeyRecord | undefined>;
  /** Carries a key's spend to another (rotation: an app's budget does not reset by rotating its key). */
  carrySpend(fromId: string, toId: string): Promise<void>;
  /** The active (not revoked) key with this hash and its account. */
  findActiveKeyByHash(hash: string): Promise<Principal | undefined>;
  touchKey(id: string, now: number): Promise<void>;
  /** The account with this (normalized) email and its password hash (null: no password set). */
  findSignIn(email: string): Promise<{ account: Account; passwordHash: string | null } | undefined>;
  setPasswordHash(id: string, hash: string): Promise<boolean>;
  /**
   * Whether externalChangeEpoch() can tell. The owner of an embedded SQLite file can (the CLI writes
   * through another connection, noticed within EXTERNAL_CHANGE_POLL_MS); replicas sharing PostgreSQL cannot, cheaply.
   */
  readonly detectsExternalChanges: boolean;
  /** A number that moves when another connection (the CLI) has committed a change. */
  externalChangeEpoch(): number;
  /** Writes what the store holds back (the embedded credit ledger); the store is not used afterwards. */
  close(): Promise<void>;
}
