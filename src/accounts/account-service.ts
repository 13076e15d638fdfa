import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import type { ChargeNote, Tier } from '../kernel/index.js';
import { RetryingWriter, type WriteBehindState } from '../storage/index.js';
import { generateApiKey, hashApiKey, isWellFormedApiKey, newId } from './api-key.js';
import { MAX_CREDIT_BALANCE, overCeiling } from './credit-ceiling.js';
import { type KeyLimitsInput, mergeKeyPatch, readKeyLimits, type TierCeilings } from './key-limits.js';
import { charged, keyExpired } from './key-refusals.js';
import { spendPeriodStart } from './key-rows.js';
import { decoyHash, hashPassword, verifyPassword } from './password.js';
import type {
  Account,
  AccountStore,
  ApiKeyRecord,
  ChargeResult,
  CreditsPort,
  KeyChanges,
  Principal,
  Refund,
} from './types.js';

export interface CreatedKey {
  key: ApiKeyRecord;
  /** The plaintext key: returned once, never stored. */
  secret: string;
}

/**
 * An email as accounts are keyed by it: trimmed, the whole address in lower case. RFC 5321 lets a mail
 * server tell local parts apart by case, but the providers people use do not, and two accounts for one
 * person (`Dev@example.com`, `dev@example.com`) is the failure that happens; lowering the domain only
 * would keep it. Every creation goes through here (admin API and CLI alike).
 */
function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Last-used times are written at most this often per key, so authentication stays a read. */
const TOUCH_INTERVAL_MS = 60_000;
const MAX_CACHED_PRINCIPALS = 10_000;

export interface AccountServiceOptions {
  /**
   * How long a resolved key may be reused without asking the database (0: never). Changes made in this
   * process (revoke, rotate, tier) take effect at once; those made by another replica within this time.
   * When the store detects changes made elsewhere (embedded SQLite: the CLI), a resolution is reused
   * until such a change, whatever its age: the CLI's revocations then take effect within 50 ms.
   */
  authCacheTtlMs?: number;
  /**
   * Where refunds the database cannot take now are kept (spilled to `spillFile` past memory's bound, written at
   * the next start if left), and how a failed write is reported: a request that failed after it was charged is
   * always given its credits back, however long the database is away.
   */
  refunds?: { spillFile: string; onError: (err: unknown, pending: number) => void };
  /** A tier's rate limits, which a key's own may not pass (default: no ceiling). */
  tierCeilings?: (tier: Tier) => { rpm: number; rpd: number };
}

/** Accounts, keys and credits: what the CLI, the admin API and authentication share. */
export class AccountService {
  readonly #store: AccountStore;
  readonly #clock: Clock;
  readonly #cacheTtlMs: number;
  readonly #principals = new Map<string, { principal: Principal; until: number }>();
  #seenEpoch = 0;

  constructor(store: AccountStore, clock: Clock, options: AccountServiceOptions = {}) {
    this.#store = store;
    this.#clock = clock;
    this.#cacheTtlMs = options.authCacheTtlMs ?? 0;
    this.#tierCeilings =
      options.tierCeilings ?? (() => ({ rpm: Number.MAX_SAFE_INTEGER, rpd: Number.MAX_SAFE_INTEGER }));
    const refundMany = store.refundMany?.bind(store);
    if (refundMany && options.refunds) {
      this.#refunds = new RetryingWriter<Refund>({
        write: (refunds, batchId) => refundMany(refunds, batchId),
        ...options.refunds,
      });
    }
  }

  readonly #refunds: RetryingWriter<Refund> | undefined;
  readonly #tierCeilings: (tier: Tier) => { rpm: number; rpd: number };

  /** Refunds kept to write again, for /metrics. */
  refundState(): WriteBehindState {
    return this.#refunds?.state() ?? { pending: 0, retries: 0, spilled: 0 };
  }

  /** Forgets every cached key resolution (after a change to keys or accounts). */
  #invalidate(): void {
    this.#principals.clear();
  }

  listAccounts(): Promise<Account[]> {
    return this.#store.listAccounts();
  }

  /** The account's balance as the store has it now (the principal's copy is from authentication). */
  async balance(accountId: string): Promise<number | undefined> {
    return (await this.#store.getAccount(accountId))?.credits;
  }

  /**
   * Takes `amount` credits if the balance allows it, atomically (never below zero, across replicas too); through a
   * key, only if its budget allows it too, in the same atomic step.
   */
  chargeCredits(accountId: string, amount: number, keyId?: string, note?: ChargeNote): Promise<ChargeResult> {
    const key = keyId === undefined ? undefined : { id: keyId, now: this.#clock() };
    return this.#store.chargeCredits(accountId, amount, key, note);
  }

  /** Gives credits back; with a refund writer it never fails: what the database cannot take now is kept. */
  refundCredits(refund: Refund): Promise<void> {
    if (this.#refunds) return this.#refunds.submit([refund]);
    const { accountId, amount, keyId, keyPeriodStart } = refund;
    const key = keyId === undefined ? undefined : { id: keyId, periodStart: keyPeriodStart ?? 0 };
    return this.#store.refundCredits(accountId, amount, key);
  }

  /** The port through which a paid operation (chat, embeddings) charges a request and refunds it on failure. */
  readonly credits: CreditsPort = {
    charge: async (payer, amount, note) =>
      charged(payer, amount, await this.chargeCredits(payer.accountId, amount, payer.keyId, note), (id) =>
        this.#store.getKey(id),
      ),
    refund: (refund) => this.refundCredits(refund),
  };

  /** Writes what the store holds back (the embedded credit ledger); the service is not used afterwards. */
  async close(): Promise<void> {
    await this.#refunds?.close();
    await this.#store.close();
  }

  async createAccount(input: {
    email: string;
    tier: Tier;
    credits?: number;
    password?: string;
  }): Promise<{ account: Account; created: CreatedKey }> {
    const credits = input.credits ?? 0;
    if (credits > MAX_CREDIT_BALANCE) throw overCeiling('credits', 0);
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    const account = await this.#store.createAccount(
      { email: normalizeEmail(input.email), tier: input.tier, credits, passwordHash },
      this.#clock(),
    );
    const created = await this.createKey(account.id, 'default');
    return { account, created };
  }

  async requireAccount(id: string): Promise<Account> {
    const account = await this.#store.getAccount(id);
    if (!account) throw new AppError('NOT_FOUND', `No account ${id}`, { account_id: id });
    return account;
  }

  /**
   * The caller a key was, rebuilt without its secret (work done later on its behalf: a background response);
   * undefined once the key is revoked, or when it is not the account's.
   */
  async principalOf(accountId: string, keyId: string): Promise<Principal | undefined> {
    const [account, key] = await Promise.all([this.#store.getAccount(accountId), this.#store.getKey(keyId)]);
    if (!account || !key || key.accountId !== accountId || key.revokedAt !== null) return undefined;
    return { account, key };
  }

  /**
   * A new key of the account; `userId` binds it to that end user (requests through it act for them alone); `limits`
   * as sent (checked by readKeyLimits, the one validation of the API, dashboard and CLI).
   */
  async createKey(
    accountId: string,
    name: string | null,
    userId: string | null = null,
    limits: KeyLimitsInput = {},
  ): Promise<CreatedKey> {
    const account = await this.requireAccount(accountId);
    const now = this.#clock();
    const read = readKeyLimits(limits, this.#ceilingsOf(account), now);
    return this.#insertKey(accountId, name, userId, read, now);
  }

  #ceilingsOf(account: Account): TierCeilings {
    return { tier: account.tier, ...this.#tierCeilings(account.tier) };
  }

  async #insertKey(
    accountId: string,
    name: string | null,
    userId: string | null,
    limits: KeyChanges,
    now: number,
  ): Promise<CreatedKey> {
    const generated = generateApiKey();
    const budget = limits.budget ?? null;
    const key: ApiKeyRecord = {
      id: newId('key'),
      accountId,
      prefix: generated.prefix,
      name,
      userId,
      createdAt: now,
      lastUsedAt: null,
      revokedAt: null,
      budget,
      spend: { credits: 0, periodStart: spendPeriodStart(budget?.period, now) },
      rateLimits: limits.rateLimits ?? null,
      models: limits.models ?? null,
      expiresAt: limits.expiresAt ?? null,
      metadata: limits.metadata ?? null,
    };
    await this.#store.insertKey(key, generated.hash);
    return { key, secret: generated.secret };
  }

  /** Changes a key's name and limits (JSON merge: absent unchanged, null cleared); `accountId`: only its own. */
  async updateKey(keyId: string, input: KeyLimitsInput, accountId?: string): Promise<ApiKeyRecord> {
    const old = accountId === undefined ? await this.#store.getKey(keyId) : await this.#requireOwnKey(accountId, keyId);
    if (!old) throw new AppError('NOT_FOUND', `No key ${keyId}`, { key_id: keyId });
    // Revoking is the key's DELETE: it stays listed for the record, but there is no key left to change.
    if (old.revokedAt !== null) {
      const revokedAt = new Date(old.revokedAt).toISOString();
      throw new AppError('NOT_FOUND', `Key ${keyId} was revoked at ${revokedAt}: create or rotate a key`, {
        key_id: keyId,
        revoked_at: revokedAt,
      });
    }
    const now = this.#clock();
    const patch = mergeKeyPatch(input, old);
    const changes = readKeyLimits(patch, this.#ceilingsOf(await this.requireAccount(old.accountId)), now);
    const periodStart = spendPeriodStart(changes.budget?.period, now);
    const key = await this.#store.updateKey(keyId, changes, periodStart);
    if (!key) throw new AppError('NOT_FOUND', `No key ${keyId}`, { key_id: keyId });
    this.#invalidate();
    return key;
  }

  /** A key of the account, with its spend as stored now. */
  async requireKey(keyId: string): Promise<ApiKeyRecord> {
    const key = await this.#store.getKey(keyId);
    if (!key) throw new AppError('NOT_FOUND', `No key ${keyId}`, { key_id: keyId });
    return key;
  }

  async revokeKey(keyId: string): Promise<ApiKeyRecord> {
    this.#invalidate();
    const key = await this.#store.revokeKey(keyId, this.#clock());
    if (!key) throw new AppError('NOT_FOUND', `No key ${keyId}`, { key_id: keyId });
    return key;
  }

  /**
   * A new key with the same name, end user and limits, continuing the old one's spend in the period (an app's budget
   * does not reset by rotating its key); the old one is revoked.
   */
  async rotateKey(keyId: string): Promise<CreatedKey> {
    const old = await this.#store.getKey(keyId);
    if (!old) throw new AppError('NOT_FOUND', `No key ${keyId}`, { key_id: keyId });
    await this.requireAccount(old.accountId);
    const limits: KeyChanges = {
      budget: old.budget ?? null,
      rateLimits: old.rateLimits ?? null,
      models: old.models ?? null,
      expiresAt: old.expiresAt ?? null,
      metadata: old.metadata ?? null,
    };
    const created = await this.#insertKey(old.accountId, old.name, old.userId, limits, this.#clock());
    // Revoked first, so that (bar requests already admitted) the old key's spend is final when it is carried.
    await this.#store.revokeKey(keyId, this.#clock());
    this.#invalidate();
    await this.#store.carrySpend(keyId, created.key.id);
    const carried = await this.#store.getKey(created.key.id);
    if (carried?.spend) created.key.spend = carried.spend;
    return created;
  }

  /**
   * Revokes a key only if it belongs to `accountId` (the developer dashboard: an account holder acts on
   * their own keys). Another account's key is NOT_FOUND, exactly like a key that does not exist.
   */
  async revokeOwnKey(accountId: string, keyId: string): Promise<ApiKeyRecord> {
    await this.#requireOwnKey(accountId, keyId);
    return this.revokeKey(keyId);
  }

  /** rotateKey for the key's own account only (NOT_FOUND otherwise, as for revokeOwnKey). */
  async rotateOwnKey(accountId: string, keyId: string): Promise<CreatedKey> {
    const key = await this.#requireOwnKey(accountId, keyId);
    if (key.revokedAt !== null) throw new AppError('CONFLICT', `Key ${keyId} is revoked`, { key_id: keyId });
    return this.rotateKey(keyId);
  }

  async #requireOwnKey(accountId: string, keyId: string): Promise<ApiKeyRecord> {
    const key = await this.#store.getKey(keyId);
    if (!key || key.accountId !== accountId) throw new AppError('NOT_FOUND', `No key ${keyId}`, { key_id: keyId });
    return key;
  }

  /**
   * The account for an email and password, or undefined. An unknown email, an account without a
   * password and a wrong password take the same time (a hash is checked in every case), so the answer
   * does not tell which emails have accounts.
   */
  async verifySignIn(email: string, password: string): Promise<Account | undefined> {
    const found = await this.#store.findSignIn(normalizeEmail(email));
    const ok = await verifyPassword(password, found?.passwordHash ?? (await decoyHash()));
    return ok && found?.passwordHash ? found.account : undefined;
  }

  /** Sets (or replaces) the password the account holder signs in to the developer dashboard with. */
  async setPassword(accountId: string, password: string): Promise<void> {
    if (password.length < 8) {
      throw new AppError('INVALID_PARAMETER', 'A password has at least 8 characters', { field: 'password' });
    }
    const hash = await hashPassword(password);
    if (!(await this.#store.setPasswordHash(accountId, hash))) {
      throw new AppError('NOT_FOUND', `No account ${accountId}`, { account_id: accountId });
    }
  }

  async listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    await this.requireAccount(accountId);
    return this.#store.listKeys(accountId);
  }

  async setTier(accountId: string, tier: Tier): Promise<Account> {
    this.#invalidate();
    const account = await this.#store.setTier(accountId, tier);
    if (!account) throw new AppError('NOT_FOUND', `No account ${accountId}`, { account_id: accountId });
    return account;
  }

  /** Whether the account's request logs keep the input and answer text; seen by its keys after the auth cache. */
  async setLogContent(accountId: string, on: boolean): Promise<Account> {
    this.#invalidate();
    const account = await this.#store.setLogContent(accountId, on);
    if (!account) throw new AppError('NOT_FOUND', `No account ${accountId}`, { account_id: accountId });
    return account;
  }

  async addCredits(accountId: string, amount: number): Promise<Account> {
    const account = await this.#store.addCredits(accountId, amount, MAX_CREDIT_BALANCE);
    if (account) return account;
    // Nothing was added: no such account (NOT_FOUND), or the balance would pass the ceiling.
    throw overCeiling('amount', (await this.requireAccount(accountId)).credits);
  }

  /** The principal for a presented key, or undefined for a malformed, unknown or revoked one. */
  async authenticate(secret: string): Promise<Principal | undefined> {
    if (!isWellFormedApiKey(secret)) return undefined;
    const hash = hashApiKey(secret);
    const now = this.#clock();
    const watched = this.#store.detectsExternalChanges;
    if (watched) {
      const epoch = this.#store.externalChangeEpoch();
      if (epoch !== this.#seenEpoch) {
        this.#seenEpoch = epoch;
        this.#invalidate();
      }
    }
    const cached = this.#principals.get(hash);
    const principal = cached && (watched || cached.until > now) ? cached.principal : await this.#lookUp(hash, now);
    if (!principal) return undefined;
    const expiresAt = principal.key.expiresAt;
    if (expiresAt !== null && expiresAt !== undefined && expiresAt <= now)
      throw keyExpired(principal.key.id, expiresAt);
    if (principal.key.lastUsedAt === null || now - principal.key.lastUsedAt > TOUCH_INTERVAL_MS) {
      const before = principal.key.lastUsedAt;
      principal.key.lastUsedAt = now;
      // "Last used" is a hint: a store that cannot take it now does not refuse the key; a later request writes it.
      await this.#store.touchKey(principal.key.id, now).catch(() => {
        principal.key.lastUsedAt = before;
      });
    }
    return principal;
  }

  async #lookUp(hash: string, now: number): Promise<Principal | undefined> {
    const principal = await this.#store.findActiveKeyByHash(hash);
    if (principal && this.#cacheTtlMs > 0) {
      // Bounded: a flood of distinct valid keys cannot grow it without end.
      if (this.#principals.size >= MAX_CACHED_PRINCIPALS) this.#principals.clear();
      this.#principals.set(hash, { principal, until: now + this.#cacheTtlMs });
    }
    return principal;
  }
}
