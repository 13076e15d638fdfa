import { AppError } from '../errors/index.js';
import type { Tier } from '../kernel/index.js';
import { type TurnCommit, type TurnWriter, WriteBehindTimer } from '../storage/index.js';
import type { SqlAccountStore } from './sql-account-store.js';
import type { Account, AccountStore, ApiKeyRecord, ChargeResult, NewAccount, Principal } from './types.js';

interface Balance {
  /** The balance as this process knows it: the stored one plus `pending`. */
  balance: number;
  /** Charges (negative) and refunds (positive) not yet written. */
  pending: number;
}

/** A charge (negative) or refund (positive) waiting for the commit that stores it. */
interface Waiting {
  entry: Balance;
  delta: number;
  resolve(): void;
  reject(err: unknown): void;
}

export interface CreditLedgerOptions {
  /** How soon a refund is written again after its commit failed. Default 200. */
  retryIntervalMs?: number;
  onError?: (err: unknown) => void;
}

/**
 * Credits for the server that owns an embedded database (see ProcessLock): balances are checked and
 * charged in memory, so deciding needs no storage round trip, and every charge is durable before the
 * caller goes on. The charges and refunds of one event-loop turn are written in the turn's one
 * transaction (storage's TurnCommit, shared with the rate limiter's admissions) and their promises
 * settle after it: a charge the client was told
 * about survives a crash; a crash can only lose charges of requests still in flight, never answered. A
 * commit that fails undoes its charges (they are refused with 503, nothing taken) and keeps its refunds
 * pending for the next write. It stays exact: only this process charges, and the others that write (the
 * CLI) only add credits, which it notices through the store's external-change epoch before each charge
 * (it then writes its deltas and rereads the balances). Everything else is the SQL store's.
 */
export class CreditLedgerAccountStore implements AccountStore, TurnWriter {
  readonly #inner: SqlAccountStore;
  readonly #balances = new Map<string, Balance>();
  /** Accounts with deltas not yet written. */
  readonly #dirty = new Map<string, Balance>();
  #waiting: Waiting[] = [];
  readonly #onError: (err: unknown) => void;
  readonly #commit: TurnCommit;
  readonly #retry: WriteBehindTimer;
  #epoch: number;

  constructor(inner: SqlAccountStore, options: CreditLedgerOptions = {}) {
    this.#inner = inner;
    this.#onError = options.onError ?? (() => undefined);
    this.#commit = inner.turnCommit;
    this.#retry = new WriteBehindTimer(() => this.flush(), options.retryIntervalMs ?? 200, this.#onError);
    this.#epoch = inner.externalChangeEpoch();
  }

  get detectsExternalChanges(): boolean {
    return this.#inner.detectsExternalChanges;
  }

  externalChangeEpoch(): number {
    return this.#inner.externalChangeEpoch();
  }

  /** Decided in memory, at once; resolves once the charge is stored (end of this event-loop turn). */
  async chargeCredits(id: string, amount: number): Promise<ChargeResult> {
    const entry = await this.#entry(id);
    if (!entry) return { ok: false, balance: 0 };
    if (entry.balance < amount) return { ok: false, balance: entry.balance };
    this.#change(id, entry, -amount);
    const balance = entry.balance;
    await this.#stored(entry, -amount);
    return { ok: true, balance };
  }

  /** Resolves once the refund is stored, or (its commit failed) kept pending to be written again. */
  async refundCredits(id: string, amount: number): Promise<void> {
    this.#syncWithOthers();
    const entry = this.#balances.get(id);
    if (!entry) return this.#inner.refundCredits(id, amount);
    this.#change(id, entry, amount);
    await this.#stored(entry, amount);
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

  /** Writes every pending delta now, in one transaction; what waited for it goes on. Throws if it failed. */
  flush(): void {
    const deltas = this.#pendingDeltas();
    if (deltas.length > 0) this.#inner.applyCreditDeltas(deltas);
    this.#written();
  }

  /** The turn's part: every pending delta, inside the turn's transaction. */
  writeTurn(): void {
    const deltas = this.#pendingDeltas();
    if (deltas.length > 0) this.#inner.writeCreditDeltas(deltas);
  }

  turnStored(): void {
    this.#written();
  }

  /** The turn's transaction failed: its charges are undone and refused, its refunds stay pending. */
  turnFailed(err: unknown): void {
    this.#onError(err);
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const w of waiting) {
      if (w.delta > 0) {
        w.resolve();
        continue;
      }
      w.entry.balance -= w.delta;
      w.entry.pending -= w.delta;
      w.reject(
        new AppError(
          'SERVICE_UNAVAILABLE',
          'The charge could not be stored; nothing was charged',
          null,
          {},
          { cause: err },
        ),
      );
    }
    if (this.#dirty.size > 0) this.#retry.schedule();
  }

  #pendingDeltas(): Array<{ accountId: string; delta: number }> {
    const deltas: Array<{ accountId: string; delta: number }> = [];
    for (const [accountId, entry] of this.#dirty)
      if (entry.pending !== 0) deltas.push({ accountId, delta: entry.pending });
    return deltas;
  }

  /** What was pending is stored (nothing ran between reading the deltas and writing them): waiters go on. */
  #written(): void {
    for (const entry of this.#dirty.values()) entry.pending = 0;
    this.#dirty.clear();
    this.#retry.cancel();
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const w of waiting) w.resolve();
  }

  async close(): Promise<void> {
    this.#commit.withdraw(this);
    this.flush();
    await this.#inner.close();
  }

  #change(id: string, entry: Balance, delta: number): void {
    entry.balance += delta;
    entry.pending += delta;
    this.#dirty.set(id, entry);
  }

  #stored(entry: Balance, delta: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ entry, delta, resolve, reject });
      this.#commit.schedule(this);
    });
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
  setLogContent(id: string, on: boolean): Promise<Account | undefined> {
    return this.#inner.setLogContent(id, on).then((account) => account && this.#withKnownBalance(account));
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
  findSignIn(email: string): Promise<{ account: Account; passwordHash: string | null } | undefined> {
    return this.#inner
      .findSignIn(email)
      .then((found) => found && { ...found, account: this.#withKnownBalance(found.account) });
  }
  setPasswordHash(id: string, hash: string): Promise<boolean> {
    return this.#inner.setPasswordHash(id, hash);
  }
}
