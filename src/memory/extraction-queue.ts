import type { Db, DialectStatements, Row } from '../storage/index.js';
import type { Tenant } from './types.js';

/** A chat turn waiting for its facts to be extracted: stored before the turn's answer went out. */
export interface ExtractionJob {
  id: number;
  tenant: Tenant;
  turn: string;
  createdAt: number;
  /** Claims so far, this one included. */
  attempts: number;
}

/**
 * The durable extraction queue (table `memory_extractions`), shared by every worker of every replica on
 * the same database. Only the head of an end user's queue is claimable, so a user's turns are reconciled
 * in order and never by two workers at once.
 */
export interface ExtractionQueue {
  enqueue(tenant: Tenant, turn: string, at: number): Promise<void>;
  /** Leases the oldest claimable job (the head of its user's queue, lease run out) to `owner`. */
  claim(now: number, leaseMs: number, owner: string): Promise<ExtractionJob | undefined>;
  /** The job is done: gone from the queue (unless another worker took it over meanwhile). */
  complete(job: ExtractionJob, owner: string): Promise<void>;
  /** A failed attempt: the job is claimable again at `retryAt`. */
  retryLater(job: ExtractionJob, owner: string, retryAt: number): Promise<void>;
  /** This process is the database's only writer (SQLite owner): a previous run's leases are void. */
  releaseLeases(): Promise<void>;
  /**
   * Drops the user's waiting jobs (not leased, waiting for a retry, or whose lease ran out) and says how many
   * are still leased: being extracted by some worker right now.
   */
  dropTenant(tenant: Tenant, now: number): Promise<{ dropped: number; leased: number }>;
  /** Jobs in the queue, leased or not. */
  pending(): Promise<number>;
}

interface QueueStatements {
  /** After the claim's subquery: a lock so that two workers (replicas) never take the same job. */
  claimLock: string;
}

const statements: DialectStatements<QueueStatements> = {
  sqlite: { claimLock: '' },
  postgres: { claimLock: 'FOR UPDATE SKIP LOCKED' },
};

function toJob(row: Row): ExtractionJob {
  return {
    id: Number(row.id),
    tenant: { accountId: row.account_id as string, userId: row.user_id as string },
    turn: row.turn as string,
    createdAt: Number(row.created_at),
    attempts: Number(row.attempts),
  };
}

/** The queue in the service's database (SQLite or PostgreSQL). */
export class SqlExtractionQueue implements ExtractionQueue {
  readonly #db: Db;
  readonly #sql: QueueStatements;

  constructor(db: Db) {
    this.#db = db;
    this.#sql = statements[db.dialect];
  }

  async enqueue(tenant: Tenant, turn: string, at: number): Promise<void> {
    await this.#db.query(
      'INSERT INTO memory_extractions (account_id, user_id, turn, created_at) VALUES ($1, $2, $3, $4)',
      [tenant.accountId, tenant.userId, turn, at],
    );
  }

  async claim(now: number, leaseMs: number, owner: string): Promise<ExtractionJob | undefined> {
    // The head of a user's queue is the job no older job of the same user precedes: while it is leased,
    // nothing of that user is claimable (its lease has not run out, and the rest are not heads).
    const rows = await this.#db.query(
      `UPDATE memory_extractions SET lease_until = $1, lease_owner = $2, attempts = attempts + 1
       WHERE id IN (SELECT e.id FROM memory_extractions e
                    WHERE e.lease_until < $3
                      AND NOT EXISTS (SELECT 1 FROM memory_extractions o
                                      WHERE o.account_id = e.account_id AND o.user_id = e.user_id AND o.id < e.id)
                    ORDER BY e.id LIMIT 1 ${this.#sql.claimLock})
       RETURNING id, account_id, user_id, turn, created_at, attempts`,
      [now + leaseMs, owner, now],
    );
    return rows[0] ? toJob(rows[0]) : undefined;
  }

  async complete(job: ExtractionJob, owner: string): Promise<void> {
    await this.#db.query('DELETE FROM memory_extractions WHERE id = $1 AND lease_owner = $2', [job.id, owner]);
  }

  async retryLater(job: ExtractionJob, owner: string, retryAt: number): Promise<void> {
    // No owner: an erase of the user does not wait for a job that is only waiting to be tried again.
    await this.#db.query(
      'UPDATE memory_extractions SET lease_until = $1, lease_owner = NULL WHERE id = $2 AND lease_owner = $3',
      [retryAt, job.id, owner],
    );
  }

  async releaseLeases(): Promise<void> {
    await this.#db.query('UPDATE memory_extractions SET lease_until = 0, lease_owner = NULL');
  }

  async dropTenant(tenant: Tenant, now: number): Promise<{ dropped: number; leased: number }> {
    const params = [tenant.accountId, tenant.userId];
    const dropped = await this.#db.query(
      `DELETE FROM memory_extractions WHERE account_id = $1 AND user_id = $2 AND (lease_owner IS NULL OR lease_until < $3)
       RETURNING id`,
      [...params, now],
    );
    const [left] = await this.#db.query<{ n: number }>(
      'SELECT count(*) AS n FROM memory_extractions WHERE account_id = $1 AND user_id = $2',
      params,
    );
    return { dropped: dropped.length, leased: Number(left?.n ?? 0) };
  }

  async pending(): Promise<number> {
    const [row] = await this.#db.query<{ n: number }>('SELECT count(*) AS n FROM memory_extractions');
    return Number(row?.n ?? 0);
  }
}
