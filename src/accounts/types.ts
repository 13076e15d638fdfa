import type { Account, ApiKeyRecord, Principal, Tier } from '../kernel/index.js';

export type { Account, ApiKeyRecord, Principal };

export interface NewAccount {
  email: string;
  tier: Tier;
  credits: number;
  passwordHash: string | null;
}

export type ChargeResult = { ok: true; balance: number } | { ok: false; balance: number };

/** Credits as a paid operation sees them: an atomic check-and-charge (never below zero) and its refund. */
export interface CreditsPort {
  charge(accountId: string, amount: number): Promise<ChargeResult>;
  refund(accountId: string, amount: number): Promise<void>;
}

/** The storage port for accounts, keys and credits. */
/** Credits given back to an account (a request that failed after it was charged). */
export interface Refund {
  accountId: string;
  amount: number;
}

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
  chargeCredits(id: string, amount: number): Promise<ChargeResult>;
  refundCredits(id: string, amount: number): Promise<void>;
  /**
   * PostgreSQL: refunds in one transaction, written once per `batchId` (a retry after a lost COMMIT answer adds
   * nothing). Absent where refunds never meet an absent engine (embedded SQLite's credit ledger).
   */
  refundMany?(refunds: readonly Refund[], batchId: string): Promise<void>;
  insertKey(key: ApiKeyRecord, hash: string): Promise<void>;
  getKey(id: string): Promise<ApiKeyRecord | undefined>;
  listKeys(accountId: string): Promise<ApiKeyRecord[]>;
  revokeKey(id: string, now: number): Promise<ApiKeyRecord | undefined>;
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
