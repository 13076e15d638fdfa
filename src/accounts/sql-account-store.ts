import type BetterSqlite3 from 'better-sqlite3';
import { AppError } from '../errors/index.js';
import { isTier, type Tier } from '../kernel/index.js';
import {
  type Db,
  type ExternalChanges,
  externalChanges,
  type Row,
  type SqliteDb,
  type TurnCommit,
  transaction,
  turnCommitOf,
  WriteBatches,
} from '../storage/index.js';
import { newId } from './api-key.js';
import type { Account, AccountStore, ApiKeyRecord, ChargeResult, NewAccount, Principal, Refund } from './types.js';

const ACCOUNT_COLUMNS = 'id, email, tier, credits, created_at, log_content';
const KEY_COLUMNS = 'id, account_id, prefix, name, user_id, created_at, last_used_at, revoked_at';

function toAccount(row: Row): Account {
  const tier = row.tier;
  if (!isTier(tier)) throw new Error(`account ${String(row.id)} has unknown tier ${String(tier)}`);
  return {
    id: String(row.id),
    email: String(row.email),
    tier,
    credits: Number(row.credits),
    createdAt: Number(row.created_at),
    logContent: Boolean(row.log_content),
  };
}

function toKey(row: Row): ApiKeyRecord {
  const nullableNumber = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    id: String(row.id),
    accountId: String(row.account_id),
    prefix: String(row.prefix),
    name: row.name === null || row.name === undefined ? null : String(row.name),
    userId: row.user_id === null || row.user_id === undefined ? null : String(row.user_id),
    createdAt: Number(row.created_at),
    lastUsedAt: nullableNumber(row.last_used_at),
    revokedAt: nullableNumber(row.revoked_at),
  };
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint/.test(e.message ?? '');
}

function emailTaken(email: string): AppError {
  return new AppError('CONFLICT', `An account with the email ${email} exists`, { field: 'email' });
}

/**
 * The statement of the embedded database alone, with better-sqlite3's positional `?`: the credit ledger's
 * write of its deltas (`applyCreditDeltas`). PostgreSQL has no counterpart (every charge there is one
 * statement), so it is not a per-dialect pair.
 */
const SQLITE_ONLY = {
  addDelta: 'UPDATE accounts SET credits = credits + ? WHERE id = ?',
} as const;

/**
 * One adapter for both dialects: every statement of the AccountStore port is portable SQL with `$n`
 * placeholders; SQLITE_ONLY are the embedded server's own.
 */
export class SqlAccountStore implements AccountStore {
  readonly #db: Db;
  readonly detectsExternalChanges: boolean;
  readonly #changes: ExternalChanges | undefined;
  readonly #embedded: { update: BetterSqlite3.Statement; db: SqliteDb } | undefined;

  constructor(db: Db) {
    this.#db = db;
    this.detectsExternalChanges = db.dialect === 'sqlite' && db.owned;
    if (db.dialect === 'sqlite') this.#embedded = { update: db.sqlite.prepare(SQLITE_ONLY.addDelta), db };
    this.#changes = db.dialect === 'sqlite' && db.owned ? externalChanges(db) : undefined;
  }

  externalChangeEpoch(): number {
    return this.#changes?.epoch ?? 0;
  }

  /** SQLite only: the end-of-turn transaction the credit ledger writes its charges in. */
  get turnCommit(): TurnCommit {
    if (!this.#embedded) throw new Error("the turn commit is the embedded database's");
    return turnCommitOf(this.#embedded.db.sqlite);
  }

  /** SQLite only: adds each delta to its account's balance, all in one transaction. */
  applyCreditDeltas(deltas: ReadonlyArray<{ accountId: string; delta: number }>): void {
    const embedded = this.#embedded;
    if (!embedded) throw new Error('applyCreditDeltas is for the embedded database');
    transaction(embedded.db, () => this.writeCreditDeltas(deltas));
  }

  /** SQLite only: adds each delta to its account's balance, inside the caller's transaction. */
  writeCreditDeltas(deltas: ReadonlyArray<{ accountId: string; delta: number }>): void {
    const update = this.#embedded?.update;
    if (!update) throw new Error('writeCreditDeltas is for the embedded database');
    for (const row of deltas) update.run(row.delta, row.accountId);
  }

  async close(): Promise<void> {
    // Every write was made by its own statement; the watch of external changes ends with the connection.
  }

  async createAccount(input: NewAccount, now: number): Promise<Account> {
    const id = newId('acct');
    // New emails arrive in lower case (AccountService) and the UNIQUE constraint keeps them apart; rows
    // written before that may not be, so a new account that differs from one of them only in case is
    // refused here too. No race: such a row is never written any more, so it already exists or never will.
    const taken = await this.#db.query('SELECT id FROM accounts WHERE lower(email) = lower($1)', [input.email]);
    if (taken.length > 0) throw emailTaken(input.email);
    try {
      await this.#db.query(
        'INSERT INTO accounts (id, email, tier, credits, password_hash, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
        [id, input.email, input.tier, input.credits, input.passwordHash, now],
      );
    } catch (err) {
      if (isUniqueViolation(err)) throw emailTaken(input.email);
      throw err;
    }
    return { id, email: input.email, tier: input.tier, credits: input.credits, createdAt: now, logContent: false };
  }

  async getAccount(id: string): Promise<Account | undefined> {
    const rows = await this.#db.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1`, [id]);
    return rows[0] ? toAccount(rows[0]) : undefined;
  }

  async listAccounts(): Promise<Account[]> {
    const rows = await this.#db.query(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY created_at, id`);
    return rows.map(toAccount);
  }

  async setTier(id: string, tier: Tier): Promise<Account | undefined> {
    const rows = await this.#db.query(`UPDATE accounts SET tier = $2 WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`, [
      id,
      tier,
    ]);
    return rows[0] ? toAccount(rows[0]) : undefined;
  }

  async setLogContent(id: string, on: boolean): Promise<Account | undefined> {
    const rows = await this.#db.query(
      `UPDATE accounts SET log_content = $2 WHERE id = $1 RETURNING ${ACCOUNT_COLUMNS}`,
      [id, on ? 1 : 0],
    );
    return rows[0] ? toAccount(rows[0]) : undefined;
  }

  async addCredits(id: string, amount: number, maxBalance: number): Promise<Account | undefined> {
    // One conditional statement, like a charge: two grants at once cannot both pass the ceiling.
    const rows = await this.#db.query(
      `UPDATE accounts SET credits = credits + $2 WHERE id = $1 AND credits + $2 <= $3 RETURNING ${ACCOUNT_COLUMNS}`,
      [id, amount, maxBalance],
    );
    return rows[0] ? toAccount(rows[0]) : undefined;
  }

  async chargeCredits(id: string, amount: number): Promise<ChargeResult> {
    // One conditional statement: the database, not the application, decides who gets the last credits.
    const rows = await this.#db.query(
      'UPDATE accounts SET credits = credits - $2 WHERE id = $1 AND credits >= $2 RETURNING credits',
      [id, amount],
    );
    if (rows[0]) return { ok: true, balance: Number(rows[0].credits) };
    const current = await this.#db.query('SELECT credits FROM accounts WHERE id = $1', [id]);
    return { ok: false, balance: current[0] ? Number(current[0].credits) : 0 };
  }

  async refundCredits(id: string, amount: number): Promise<void> {
    await this.#db.query('UPDATE accounts SET credits = credits + $2 WHERE id = $1', [id, amount]);
  }

  readonly #batches = new WriteBatches();

  async refundMany(refunds: readonly Refund[], batchId: string): Promise<void> {
    const db = this.#db;
    if (db.dialect !== 'postgres') {
      for (const r of refunds) await this.refundCredits(r.accountId, r.amount);
      return;
    }
    await transaction(db, async (tx) => {
      if (!(await this.#batches.claim(tx, batchId))) return;
      for (const r of refunds) {
        await tx.query('UPDATE accounts SET credits = credits + $2 WHERE id = $1', [r.accountId, r.amount]);
      }
    });
  }

  async insertKey(key: ApiKeyRecord, hash: string): Promise<void> {
    await this.#db.query(
      'INSERT INTO api_keys (id, account_id, key_hash, prefix, name, user_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [key.id, key.accountId, hash, key.prefix, key.name, key.userId, key.createdAt],
    );
  }

  async getKey(id: string): Promise<ApiKeyRecord | undefined> {
    const rows = await this.#db.query(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [id]);
    return rows[0] ? toKey(rows[0]) : undefined;
  }

  async listKeys(accountId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.#db.query(
      `SELECT ${KEY_COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at, id`,
      [accountId],
    );
    return rows.map(toKey);
  }

  async revokeKey(id: string, now: number): Promise<ApiKeyRecord | undefined> {
    // COALESCE keeps the first revocation time when a key is revoked twice.
    const rows = await this.#db.query(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
      [id, now],
    );
    return rows[0] ? toKey(rows[0]) : undefined;
  }

  async findActiveKeyByHash(hash: string): Promise<Principal | undefined> {
    const rows = await this.#db.query(
      `SELECT k.id, k.account_id, k.prefix, k.name, k.user_id, k.created_at, k.last_used_at, k.revoked_at,
              a.email, a.tier, a.credits, a.created_at AS account_created_at, a.log_content
         FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [hash],
    );
    const row = rows[0];
    if (!row) return undefined;
    const key = toKey(row);
    const account = toAccount({
      id: row.account_id,
      email: row.email,
      tier: row.tier,
      credits: row.credits,
      created_at: row.account_created_at,
      log_content: row.log_content,
    });
    return { account, key };
  }

  async touchKey(id: string, now: number): Promise<void> {
    await this.#db.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1', [id, now]);
  }

  async findSignIn(email: string): Promise<{ account: Account; passwordHash: string | null } | undefined> {
    const rows = await this.#db.query(`SELECT ${ACCOUNT_COLUMNS}, password_hash FROM accounts WHERE email = $1`, [
      email,
    ]);
    const row = rows[0];
    if (!row) return undefined;
    const hash = row.password_hash;
    return { account: toAccount(row), passwordHash: typeof hash === 'string' && hash ? hash : null };
  }

  async setPasswordHash(id: string, hash: string): Promise<boolean> {
    const rows = await this.#db.query('UPDATE accounts SET password_hash = $2 WHERE id = $1 RETURNING id', [id, hash]);
    return rows.length > 0;
  }
}
