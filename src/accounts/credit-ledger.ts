import type { Tier } from '../kernel/index.js';
import { WriteBehindTimer } from '../storage/index.js';
import type { SqlAccountStore } from './sql-account-store.js';
import type { Account, AccountStore, ApiKeyRecord, ChargeResult, NewAccount, Principal } from './types.js';

interface Balance {
  /** The balance as this process knows it: the stored one plus `pending`. */
  balance: number;
  /** Charges (negative) and refunds (positive) not yet written. */
  pending: number;
}

export interface CreditLedgerOptions {
  /** How long charges wait before they are written (what a crash can give away). Default 200. */
  flushIntervalMs?: number;
  onError?: (err: unknown) => void;
}

/**
 * Credits for the server that owns an embedded database (see ProcessLock): balances are checked and
 * charged in memory and written behind as one transaction of deltas. It stays exact: only this process
 * charges, and the others that write (the CLI) only add credits, which it notices through the store's
 * external-change epoch before each charge (it then writes its deltas and rereads the balances). A crash
 * can lose the last interval's charges, never let a balance go below zero. Everything else is the
 * SQL store's.
 */
export class CreditLedgerAccountStore implements AccountStore {
  readonly #inner: SqlAccountStore;
  readonly #balances = new Map<string, Balance>();
  readonly #onError: (err: unknown) => void;
  readonly #writes: WriteBehindTimer;
  #epoch: number;

  constructor(inner: SqlAccountStore, options: CreditLedgerOptions = {}) {
    this.#inner = inner;
    this.#onError = options.onError ?? (() => undefined);
    // A failed write keeps the deltas pending; they go with the next one.
    this.#writes = new WriteBehindTimer(() => this.flush(), options.flushIntervalMs ?? 200, this.#onError);
    this.#epoch = inner.externalChangeEpoch();
  }

  get detectsExternalChanges(): boolean {
    return this.#inner.detectsExternalChanges;
  }

  externalChangeEpoch(): number {
    return this.#inner.externalChangeEpoch();
  }

  async chargeCredits(id: string, amount: number): Promise<ChargeResult> {
    const entry = await this.#entry(id);
    if (!entry) return { ok: false, balance: 0 };
    if (entry.balance < amount) return { ok: false, balance: entry.balance };
    entry.balance -= amount;
    entry.pending -= amount;
    this.#writes.schedule();
    return { ok: true, balance: entry.balance };
  }

  async refundCredits(id: string, amount: number): Promise<void> {
    this.#syncWithOthers();
    const entry = this.#balances.get(id);
    if (!entry) return this.#inner.refundCredits(id, amount);
    entry.balance += amount;
    entry.pending += amount;
    this.#writes.schedule();
  }

  async addCredits(id: string, amount: number, maxBalance: number): Promise<Account | undefined> {
    // Checked against the stored balance: pending charges make it at most a few credits stricter.
    const account = await this.#inner.addCredits(id, amount, maxBalance);
    if (!account) return undefined;
    // Stored and known balances move together, whatever was charged meanwhile.
    const entry = this.#balances.get(id);
    if (entry) entry.balance += amount;
    return this.#withKnownBalance(account);
  }

  async getAccount(id: string): Promise<Account | undefined> {
    const account = await this.#inner.getAccount(id);
    return account && this.#withKnownBalance(account);
  }

  async listAccounts(): Promise<Account[]> {
    return (await this.#inner.listAccounts()).map((account) => this.#withKnownBalance(account));
  }

  /** Writes every pending delta now. */
  flush(): void {
    this.#writes.cancel();
    const deltas: Array<{ accountId: string; delta: number }> = [];
    for (const [accountId, entry] of this.#balances)
      if (entry.pending !== 0) deltas.push({ accountId, delta: entry.pending });
    if (deltas.length === 0) return;
    this.#inner.applyCreditDeltas(deltas);
    for (const { accountId, delta } of deltas) {
      const entry = this.#balances.get(accountId);
      if (entry) entry.pending -= delta;
    }
  }

  async close(): Promise<void> {
    this.flush();
    await this.#inner.close();
  }

  /** Another process wrote (the CLI added credits, say): write ours, then reread balances when needed. */
  #syncWithOthers(): void {
    const epoch = this.#inner.externalChangeEpoch();
    if (epoch === this.#epoch) return;
    try {
      this.flush();
    } catch (err) {
      // Balances stay as known (with their pending deltas); the next charge tries again.
      this.#onError(err);
      return;
    }
    this.#epoch = epoch;
    this.#balances.clear();
  }

  async #entry(id: string): Promise<Balance | undefined> {
    this.#syncWithOthers();
    const known = this.#balances.get(id);
    if (known) return known;
    const account = await this.#inner.getAccount(id);
    // Another charge may have loaded it while this one waited.
    const entry = this.#balances.get(id) ?? (account && { balance: account.credits, pending: 0 });
    if (entry) this.#balances.set(id, entry);
    return entry;
  }

  #withKnownBalance(account: Account): Account {
    const entry = this.#balances.get(account.id);
    return entry ? { ...account, credits: entry.balance } : account;
  }

  // The rest is the SQL store's own.
  createAccount(input: NewAccount, now: number): Promise<Account> {
    return this.#inner.createAccount(input, now);
  }
  setTier(id: string, tier: Tier): Promise<Account | undefined> {
    return this.#inner.setTier(id, tier).then((account) => account && this.#withKnownBalance(account));
  }
  insertKey(key: ApiKeyRecord, hash: string): Promise<void> {
    return this.#inner.insertKey(key, hash);
  }
  getKey(id: string): Promise<ApiKeyRecord | undefined> {
    return this.#inner.getKey(id);
  }
  listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    return this.#inner.listKeys(accountId);
  }
  revokeKey(id: string, now: number): Promise<ApiKeyRecord | undefined> {
    return this.#inner.revokeKey(id, now);
  }
  findActiveKeyByHash(hash: string): Promise<Principal | undefined> {
    return this.#inner.findActiveKeyByHash(hash);
  }
  touchKey(id: string, now: number): Promise<void> {
    return this.#inner.touchKey(id, now);
  }
}
