import type { CreditRefund } from '../kernel/index.js';
import type { Db, Row } from '../storage/index.js';

/** A key's record as the service reads it. */
export interface IdempotencyRecord {
  fingerprint: string;
  endpoint: string;
  /** The attempt that holds a running claim; null once answered. */
  owner: string | null;
  leaseUntil: number;
  /** What the running attempt has charged and not given back. */
  refunds: CreditRefund[];
  /** The status answered; null while the request runs. */
  status: number | null;
  /** Whether the answer's body was kept (0: over the size cap). */
  stored: boolean;
  headers: Record<string, string>;
  body: Buffer | null;
  expiresAt: number;
}

/** A new claim: the row its INSERT writes. */
export interface NewClaim {
  scope: string;
  key: string;
  fingerprint: string;
  endpoint: string;
  owner: string;
  leaseUntil: number;
  createdAt: number;
  expiresAt: number;
}

function toRecord(r: Row): IdempotencyRecord {
  const body = r.body === null || r.body === undefined ? null : Buffer.from(r.body as Uint8Array);
  return {
    fingerprint: String(r.fingerprint),
    endpoint: String(r.endpoint),
    owner: r.owner === null ? null : String(r.owner),
    leaseUntil: Number(r.lease_until),
    refunds: JSON.parse(String(r.refunds)) as CreditRefund[],
    status: r.status === null ? null : Number(r.status),
    stored: Number(r.stored) === 1,
    headers: r.headers === null ? {} : (JSON.parse(String(r.headers)) as Record<string, string>),
    body,
    expiresAt: Number(r.expires_at),
  };
}

const KEY = 'scope = $1 AND idem_key = $2';

/**
 * `idempotency_keys` on either database, in portable statements. The claim is one INSERT on the primary key
 * (scope, idem_key): of two requests on any replicas, one inserts and the other reads the winner's row.
 */
export class SqlIdempotencyStore {
  constructor(private readonly db: Db) {}

  /** Inserts the claim; false when a row of the key exists. */
  async insert(c: NewClaim): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO idempotency_keys (scope, idem_key, fingerprint, endpoint, owner, lease_until, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (scope, idem_key) DO NOTHING RETURNING owner`,
      [c.scope, c.key, c.fingerprint, c.endpoint, c.owner, c.leaseUntil, c.createdAt, c.expiresAt],
    );
    return rows.length === 1;
  }

  async read(scope: string, key: string): Promise<IdempotencyRecord | undefined> {
    const [row] = await this.db.query(`SELECT * FROM idempotency_keys WHERE ${KEY}`, [scope, key]);
    return row ? toRecord(row) : undefined;
  }

  /** Deletes the key's row if it expired by `now` and is not running on a live lease; whether it did. */
  async deleteExpired(scope: string, key: string, now: number): Promise<boolean> {
    const rows = await this.db.query(
      `DELETE FROM idempotency_keys WHERE ${KEY} AND expires_at <= $3 AND (owner IS NULL OR lease_until <= $3)
       RETURNING idem_key`,
      [scope, key, now],
    );
    return rows.length > 0;
  }

  /**
   * Takes over a running claim whose lease expired (its process died): the new owner and a fresh lease; the dead
   * attempt's charges stay noted on the claim (the new owner refunds them one by one); answers them, or undefined
   * when another took it first.
   */
  async takeOver(scope: string, key: string, dead: string, owner: string, now: number, leaseUntil: number) {
    const [before] = await this.db.query(
      `SELECT refunds FROM idempotency_keys WHERE ${KEY} AND owner = $3 AND lease_until <= $4`,
      [scope, key, dead, now],
    );
    if (!before) return undefined;
    const rows = await this.db.query(
      `UPDATE idempotency_keys SET owner = $4, lease_until = $6
       WHERE ${KEY} AND owner = $3 AND lease_until <= $5 RETURNING idem_key`,
      [scope, key, dead, owner, now, leaseUntil],
    );
    return rows.length === 1 ? (JSON.parse(String(before.refunds)) as CreditRefund[]) : undefined;
  }

  /** The owner's lease renewed. */
  async renew(scope: string, key: string, owner: string, leaseUntil: number): Promise<void> {
    await this.db.query(`UPDATE idempotency_keys SET lease_until = $4 WHERE ${KEY} AND owner = $3`, [
      scope,
      key,
      owner,
      leaseUntil,
    ]);
  }

  /** The note a keyed request's charge writes with it (ChargeNote): what its attempt has charged, `noteParams`. */
  readonly noteSql = `UPDATE idempotency_keys SET refunds = $4 WHERE ${KEY} AND owner = $3 RETURNING owner`;

  noteParams(scope: string, key: string, owner: string, refunds: readonly CreditRefund[]): unknown[] {
    return [scope, key, owner, JSON.stringify(refunds)];
  }

  /** What the running attempt has charged and not given back. */
  async setRefunds(scope: string, key: string, owner: string, refunds: readonly CreditRefund[]): Promise<void> {
    await this.db.query(this.noteSql, this.noteParams(scope, key, owner, refunds));
  }

  /** The answer; the claim ends. */
  async finish(
    scope: string,
    key: string,
    owner: string,
    answer: {
      status: number;
      headers: Record<string, string>;
      body: Buffer | null;
      userId: string | null;
      fingerprint?: string | undefined;
    },
  ): Promise<void> {
    await this.db.query(
      `UPDATE idempotency_keys SET owner = NULL, refunds = '[]', status = $4, stored = $5, headers = $6, body = $7,
       user_id = $8, fingerprint = COALESCE($9, fingerprint) WHERE ${KEY} AND owner = $3`,
      [
        scope,
        key,
        owner,
        answer.status,
        answer.body === null ? 0 : 1,
        JSON.stringify(answer.headers),
        answer.body,
        answer.userId,
        answer.fingerprint ?? null,
      ],
    );
  }

  /** The owner's claim deleted: the key is free again. */
  async release(scope: string, key: string, owner: string): Promise<void> {
    await this.db.query(`DELETE FROM idempotency_keys WHERE ${KEY} AND owner = $3`, [scope, key, owner]);
  }

  /** Records past their window, and claims past both window and lease; how many. */
  async sweep(now: number): Promise<number> {
    const rows = await this.db.query(
      'DELETE FROM idempotency_keys WHERE expires_at <= $1 AND (owner IS NULL OR lease_until <= $1) RETURNING scope',
      [now],
    );
    return rows.length;
  }

  /** An end user's records (answered requests that named them), oldest first. */
  async userRows(scope: string, userId: string): Promise<Row[]> {
    return this.db.query(
      `SELECT idem_key, endpoint, status, created_at FROM idempotency_keys WHERE scope = $1 AND user_id = $2
       ORDER BY created_at, idem_key`,
      [scope, userId],
    );
  }

  async deleteUser(scope: string, userId: string): Promise<number> {
    const rows = await this.db.query(
      'DELETE FROM idempotency_keys WHERE scope = $1 AND user_id = $2 RETURNING idem_key',
      [scope, userId],
    );
    return rows.length;
  }
}
