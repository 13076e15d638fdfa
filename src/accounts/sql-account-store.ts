import type BetterSqlite3 from 'better-sqlite3';
import { AppError } from '../errors/index.js';
import type { Tier } from '../kernel/index.js';
import {
  type Db,
  type ExternalChanges,
  externalChanges,
  type Row,
  runSqlite,
  type SqliteDb,
  type TurnCommit,
  transaction,
  turnCommitOf,
  WriteBatches,
} from '../storage/index.js';
import {
  ACCOUNT_COLUMNS,
  CHARGE_ACCOUNT,
  type SpendDelta,
  SQLITE_ONLY,
  toAccount,
  type WrittenNote,
} from './account-rows.js';
import { newId } from './api-key.js';
import { refundOf } from './key-refusals.js';
import {
  CHARGE_KEY,
  CHARGE_UNBUDGETED,
  KEY_BUDGET,
  KEY_COLUMNS,
  KEY_COLUMNS_OF_K,
  keyLimitValues,
  keyUpdateSql,
  REFUND_KEY,
  spendPeriodStart,
  toKey,
} from './key-rows.js';
import type {
  Account,
  AccountStore,
  ApiKeyRecord,
  ChargeNote,
  ChargeResult,
  KeyChanges,
  KeyCharge,
  NewAccount,
  Principal,
  Refund,
} from './types.js';

/** Thrown inside a charge's transaction to roll it back, carrying the refusal. */
class Refused {
  constructor(readonly result: ChargeResult) {}
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE' || /UNIQUE constraint/.test(e.message ?? '');
}

function emailTaken(email: string): AppError {
  return new AppError('CONFLICT', `An account with the email ${email} exists`, { field: 'email' });
}

/**
 * One adapter for both dialects: every statement of the AccountStore port is portable SQL with `$n`
 * placeholders; SQLITE_ONLY are the embedded server's own.
 */
export class SqlAccountStore implements AccountStore {
  readonly #db: Db;
  readonly detectsExternalChanges: boolean;
  readonly #changes: ExternalChanges | undefined;
  readonly #embedded: { update: BetterSqlite3.Statement; spend: BetterSqlite3.Statement; db: SqliteDb } | undefined;

  constructor(db: Db) {
    this.#db = db;
    this.detectsExternalChanges = db.dialect === 'sqlite' && db.owned;
    if (db.dialect === 'sqlite') {
      const { sqlite } = db;
      this.#embedded = {
        update: sqlite.prepare(SQLITE_ONLY.addDelta),
        spend: sqlite.prepare(SQLITE_ONLY.addSpend),
        db,
      };
    }
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

  /** SQLite only: adds each delta to its account's balance (and each key's spend), all in one transaction. */
  applyCreditDeltas(
    deltas: ReadonlyArray<{ accountId: string; delta: number }>,
    spends: readonly SpendDelta[] = [],
    notes: readonly WrittenNote[] = [],
  ): void {
    const embedded = this.#embedded;
    if (!embedded) throw new Error('applyCreditDeltas is for the embedded database');
    transaction(embedded.db, () => this.writeCreditDeltas(deltas, spends, notes));
  }

  /** SQLite only: adds each delta to its account's balance (and each key's spend), inside the caller's transaction. */
  writeCreditDeltas(
    deltas: ReadonlyArray<{ accountId: string; delta: number }>,
    spends: readonly SpendDelta[] = [],
    notes: readonly WrittenNote[] = [],
  ): void {
    const embedded = this.#embedded;
    if (!embedded) throw new Error('writeCreditDeltas is for the embedded database');
    for (const row of deltas) embedded.update.run(row.delta, row.accountId);
    for (const row of spends) {
      embedded.spend.run(row.periodStart, row.periodStart, row.delta, row.delta, row.keyId);
    }
    for (const note of notes) runSqlite(embedded.db.sqlite, note.sql, note.params);
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

  async chargeCredits(id: string, amount: number, key?: KeyCharge, note?: ChargeNote): Promise<ChargeResult> {
    if (key || note) return this.#chargeInSteps(id, amount, key, note);
    // One conditional statement: the database, not the application, decides who gets the last credits.
    const rows = await this.#db.query(CHARGE_ACCOUNT, [id, amount]);
    if (rows[0]) return { ok: true, balance: Number(rows[0].credits) };
    return { ok: false, balance: await this.#balanceOf(id) };
  }

  async #balanceOf(id: string): Promise<number> {
    const current = await this.#db.query('SELECT credits FROM accounts WHERE id = $1', [id]);
    return current[0] ? Number(current[0].credits) : 0;
  }

  /**
   * The account's credits, the key's budget and the note in one atomic step. PostgreSQL: a key without a budget
   * and no note in one statement; otherwise a transaction that takes the account's credits, then the key's spend
   * if its budget allows, then writes the note, and rolls all back when refused. Row locks (account, then key) make
   * concurrent charges on every replica queue.
   */
  async #chargeInSteps(id: string, amount: number, key?: KeyCharge, note?: ChargeNote): Promise<ChargeResult> {
    const month = key ? spendPeriodStart('month', key.now) : 0;
    const db = this.#db;
    if (db.dialect === 'postgres' && key && !note) {
      const [row] = await db.query(CHARGE_UNBUDGETED, [amount, key.id, month, id]);
      if (row && row.credits !== null) return charged(row.credits, row.period_start);
      if (row && !row.budgeted) return { ok: false, balance: await this.#balanceOf(id) };
    }
    const steps = (query: (sql: string, params: unknown[]) => Row[]): ChargeResult => {
      const [account] = query(CHARGE_ACCOUNT, [id, amount]);
      if (!account) throw new Refused({ ok: false, balance: -1 });
      if (!key) return charged(account.credits, null);
      const [spend] = query(CHARGE_KEY, [amount, key.id, month]);
      if (spend) return charged(account.credits, spend.period_start);
      const [budget] = query(KEY_BUDGET, [key.id, month]);
      // No such key (deleted meanwhile): the account alone pays, as without a key.
      if (!budget || budget.budget_credits === null) return charged(account.credits, null);
      throw new Refused({
        ok: false,
        balance: Number(account.credits) + amount,
        keyBudget: {
          budget: {
            credits: Number(budget.budget_credits),
            period: budget.budget_period === 'total' ? 'total' : 'month',
          },
          spent: Number(budget.spent),
          periodStart: Number(budget.period_start),
        },
      });
    };
    const noted = (result: ChargeResult) =>
      note && result.ok
        ? note.params(
            refundOf(key ? { accountId: id, keyId: key.id } : { accountId: id }, amount, result.keyPeriodStart),
          )
        : [];
    try {
      if (db.dialect === 'sqlite') {
        return transaction(db, (tx) => {
          const result = steps((sql, params) => tx.query(sql, params));
          if (note && tx.query(note.sql, noted(result)).length === 0) throw note.lost();
          return result;
        });
      }
      return await transaction(db, async (tx) => {
        const rows: Row[][] = [];
        // The steps are synchronous over results; PostgreSQL's are fetched one by one, in the same order.
        const [account] = await tx.query(CHARGE_ACCOUNT, [id, amount]);
        rows.push(account ? [account] : []);
        if (account && key) rows.push(await tx.query(CHARGE_KEY, [amount, key.id, month]));
        if (account && key && !rows[1]?.[0]) rows.push(await tx.query(KEY_BUDGET, [key.id, month]));
        let next = 0;
        const result = steps(() => rows[next++] ?? []);
        if (note && (await tx.query(note.sql, noted(result))).length === 0) throw note.lost();
        return result;
      });
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      if (err.result.ok || err.result.keyBudget) return err.result;
      return { ok: false, balance: await this.#balanceOf(id) };
    }
  }

  async refundCredits(id: string, amount: number, key?: { id: string; periodStart: number }): Promise<void> {
    await this.#db.query('UPDATE accounts SET credits = credits + $2 WHERE id = $1', [id, amount]);
    if (key) await this.#db.query(REFUND_KEY, [key.id, amount, key.periodStart]);
  }

  readonly #batches = new WriteBatches();

  async refundMany(refunds: readonly Refund[], batchId: string): Promise<void> {
    const db = this.#db;
    if (db.dialect !== 'postgres') {
      for (const r of refunds) await this.refundCredits(r.accountId, r.amount, keyOf(r));
      return;
    }
    // Accounts, then keys, each in id order: the order charges lock them in, so the two never deadlock.
    const byAccount = [...refunds].sort((a, b) => (a.accountId < b.accountId ? -1 : a.accountId > b.accountId ? 1 : 0));
    const byKey = refunds
      .filter((r) => r.keyId !== undefined)
      .sort((a, b) => ((a.keyId ?? '') < (b.keyId ?? '') ? -1 : 1));
    await transaction(db, async (tx) => {
      if (!(await this.#batches.claim(tx, batchId))) return;
      for (const r of byAccount) {
        await tx.query('UPDATE accounts SET credits = credits + $2 WHERE id = $1', [r.accountId, r.amount]);
      }
      for (const r of byKey) await tx.query(REFUND_KEY, [r.keyId, r.amount, r.keyPeriodStart ?? 0]);
    });
  }

  async insertKey(key: ApiKeyRecord, hash: string): Promise<void> {
    await this.#db.query(
      `INSERT INTO api_keys (id, account_id, key_hash, prefix, name, user_id, created_at, budget_credits, budget_period,
         spend_credits, spend_period_start, rpm, rpd, models, expires_at, metadata)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
      [key.id, key.accountId, hash, key.prefix, key.name, key.userId, key.createdAt, ...keyLimitValues(key)],
    );
  }

  async updateKey(id: string, changes: KeyChanges, periodStart: number): Promise<ApiKeyRecord | undefined> {
    const { set, params } = keyUpdateSql(changes);
    if (changes.budget !== undefined) {
      // A budget of another period (or none, counted by month) restarts the spend: the old count is of another span.
      const current = `(CASE WHEN budget_period = 'total' THEN 'total' ELSE 'month' END)`;
      params.push(changes.budget?.period === 'total' ? 'total' : 'month', periodStart);
      const p = params.length;
      set.unshift(
        `spend_credits = CASE WHEN ${current} = $${p} THEN spend_credits ELSE 0 END`,
        `spend_period_start = CASE WHEN ${current} = $${p} THEN spend_period_start ELSE $${p + 1} END`,
      );
    }
    if (set.length === 0) return this.getKey(id);
    const rows = await this.#db.query(`UPDATE api_keys SET ${set.join(', ')} WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [
      id,
      ...params,
    ]);
    return rows[0] ? toKey(rows[0]) : undefined;
  }

  async carrySpend(fromId: string, toId: string): Promise<void> {
    await this.#db.query(
      `UPDATE api_keys SET spend_credits = (SELECT spend_credits FROM api_keys WHERE id = $1),
         spend_period_start = (SELECT spend_period_start FROM api_keys WHERE id = $1) WHERE id = $2`,
      [fromId, toId],
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
      `SELECT ${KEY_COLUMNS_OF_K}, a.email, a.tier, a.credits, a.created_at AS account_created_at, a.log_content
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

function charged(balance: unknown, periodStart: unknown): ChargeResult {
  const result: ChargeResult = { ok: true, balance: Number(balance) };
  if (periodStart !== null && periodStart !== undefined) result.keyPeriodStart = Number(periodStart);
  return result;
}

function keyOf(r: Refund): { id: string; periodStart: number } | undefined {
  return r.keyId === undefined ? undefined : { id: r.keyId, periodStart: r.keyPeriodStart ?? 0 };
}
