import { AppError } from '../errors/index.js';
import type { Tier } from '../kernel/index.js';
import { type TurnCommit, type TurnWriter, WriteBehindTimer } from '../storage/index.js';
import type { SpendDelta, WrittenNote } from './account-rows.js';
import { refundOf } from './key-refusals.js';
import { spendPeriodStart } from './key-rows.js';
import type { SqlAccountStore } from './sql-account-store.js';
import type {
  Account,
  AccountStore,
  ApiKeyRecord,
  ChargeNote,
  ChargeResult,
  KeyBudget,
  KeyChanges,
  KeyCharge,
  NewAccount,
  Principal,
} from './types.js';

interface Balance {
  /** The balance as this process knows it: the stored one plus `pending`. */
  balance: number;
  /** Charges (negative) and refunds (positive) not yet written. */
  pending: number;
}

/** A key's budget and its spend in the period starting at `periodStart`, as this process knows them. */
interface Spend {
  budget: KeyBudget | null;
  spent: number;
  periodStart: number;
  /** Spend not yet written, in `periodStart`'s period. */
  pending: number;
}

/** A charge (negative) or refund (positive) waiting for the commit that stores it. */
interface Waiting {
  entry: Balance;
  delta: number;
  /** The key's spend the charge counted (undone with it should its commit fail). */
  spend?: Spend;
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
  readonly #spends = new Map<string, Spend>();
  /** Keys with spend not yet written. */
  readonly #dirtySpends = new Map<string, Spend>();
  #waiting: Waiting[] = [];
  /** The notes of the charges waiting (ChargeNote), written in the same commit as their charges. */
  #notes: WrittenNote[] = [];
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

  /**
   * Decided in memory, at once (the key's budget, then the balance); resolves once the charge is stored (end of
   * this event-loop turn), with its note in the same commit.
   */
  async chargeCredits(id: string, amount: number, key?: KeyCharge, note?: ChargeNote): Promise<ChargeResult> {
    const entry = await this.#entry(id);
    const spend = key && (await this.#spendOf(key.id));
    if (!entry) return { ok: false, balance: 0 };
    let periodStart: number | undefined;
    if (key && spend) {
      periodStart = spendPeriodStart(spend.budget?.period, key.now);
      if (spend.periodStart !== periodStart) Object.assign(spend, { spent: 0, periodStart, pending: 0 });
      if (spend.budget && spend.spent + amount > spend.budget.credits) {
        return {
          ok: false,
          balance: entry.balance,
          keyBudget: { budget: spend.budget, spent: spend.spent, periodStart },
        };
      }
    }
    if (entry.balance < amount) return { ok: false, balance: entry.balance };
    this.#change(id, entry, -amount);
    if (key && spend) this.#spend(key.id, spend, amount);
    if (note) {
      const refund = refundOf(key ? { accountId: id, keyId: key.id } : { accountId: id }, amount, periodStart);
      this.#notes.push({ sql: note.sql, params: note.params(refund) });
    }
    const balance = entry.balance;
    await this.#stored(entry, -amount, spend);
    return periodStart === undefined ? { ok: true, balance } : { ok: true, balance, keyPeriodStart: periodStart };
  }

  /** Resolves once the refund is stored, or (its commit failed) kept pending to be written again. */
  async refundCredits(id: string, amount: number, key?: { id: string; periodStart: number }): Promise<void> {
    this.#syncWithOthers();
    const spend = key && this.#spends.get(key.id);
    // A key whose spend this process does not hold (not charged since a reread) is given back in the database.
    if (key && !spend) await this.#inner.refundCredits(id, 0, key);
    if (key && spend && spend.periodStart === key.periodStart)
      this.#spend(key.id, spend, -Math.min(amount, spend.spent));
    const entry = this.#balances.get(id);
    if (!entry) return this.#inner.refundCredits(id, amount);
    this.#change(id, entry, amount);
    await this.#stored(entry, amount);
  }

  /** Written first, then changed: the new budget (and a spend restarted) are reread at the next charge. */
  async updateKey(id: string, changes: KeyChanges, periodStart: number): Promise<ApiKeyRecord | undefined> {
    this.flush();
    this.#spends.delete(id);
    return this.#inner.updateKey(id, changes, periodStart);
  }

  async carrySpend(fromId: string, toId: string): Promise<void> {
    this.flush();
    this.#spends.delete(toId);
    await this.#inner.carrySpend(fromId, toId);
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
    const spends = this.#pendingSpends();
    if (deltas.length > 0 || spends.length > 0) this.#inner.applyCreditDeltas(deltas, spends, this.#notes);
    this.#written();
  }

  /** The turn's part: every pending delta, inside the turn's transaction. */
  writeTurn(): void {
    const deltas = this.#pendingDeltas();
    const spends = this.#pendingSpends();
    if (deltas.length > 0 || spends.length > 0) this.#inner.writeCreditDeltas(deltas, spends, this.#notes);
  }

  turnStored(): void {
    this.#written();
  }

  /** The turn's transaction failed: its charges are undone and refused, its refunds stay pending. */
  turnFailed(err: unknown): void {
    this.#onError(err);
    const waiting = this.#waiting;
    this.#waiting = [];
    // Their charges are undone: so are their notes.
    if (this.#notes.length > 0) this.#notes = [];
    for (const w of waiting) {
      if (w.delta > 0) {
        w.resolve();
        continue;
      }
      w.entry.balance -= w.delta;
      w.entry.pending -= w.delta;
      if (w.spend) {
        w.spend.spent += w.delta;
        w.spend.pending += w.delta;
      }
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
    if (this.#dirty.size > 0 || this.#dirtySpends.size > 0) this.#retry.schedule();
  }

  #pendingSpends(): SpendDelta[] {
    const spends: SpendDelta[] = [];
    for (const [keyId, s] of this.#dirtySpends) spends.push({ keyId, periodStart: s.periodStart, delta: s.pending });
    return spends;
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
    for (const spend of this.#dirtySpends.values()) spend.pending = 0;
    this.#dirtySpends.clear();
    this.#retry.cancel();
    if (this.#notes.length > 0) this.#notes = [];
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

  #spend(keyId: string, spend: Spend, amount: number): void {
    spend.spent += amount;
    spend.pending += amount;
    this.#dirtySpends.set(keyId, spend);
  }

  #stored(entry: Balance, delta: number, spend?: Spend): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push(spend ? { entry, delta, spend, resolve, reject } : { entry, delta, resolve, reject });
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
    this.#spends.clear();
  }

  /** The key's budget and spend, read once (undefined: no such key; its account alone then pays). */
  async #spendOf(keyId: string): Promise<Spend | undefined> {
    const known = this.#spends.get(keyId);
    if (known) return known;
    const key = await this.#inner.getKey(keyId);
    const spend = this.#spends.get(keyId) ?? (key && { budget: key.budget ?? null, pending: 0, ...fromKey(key) });
    if (spend) this.#spends.set(keyId, spend);
    return spend;
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

function fromKey(key: ApiKeyRecord): { spent: number; periodStart: number } {
  return { spent: key.spend?.credits ?? 0, periodStart: key.spend?.periodStart ?? 0 };
}
