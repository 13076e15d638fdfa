import { type Db, type DialectStatements, placeholderList, type Row, transaction } from '../../storage/index.js';
import type { ResponseEvent } from '../events.js';
import { putStatements } from '../sql-response-store.js';
import type { ResponseBody, ResponseCreateBody, StoredResponse, Tenant } from '../types.js';

/** `queued` until its first model call may be made, `in_progress` from then on, `done` once its response is final. */
export type RunState = 'queued' | 'in_progress' | 'done';

/** What a worker runs: the request as created (its input items with their ids) and the tier's sandbox timeout. */
export interface QueuedRequest {
  body: ResponseCreateBody;
  codeTimeoutSeconds: number;
  /** The response's `created_at` (seconds), kept by the run. */
  createdAt: number;
}

/** A background response's run, as a worker (or a cancel) claimed it. */
export interface RunRecord {
  responseId: string;
  tenant: Tenant;
  keyId: string;
  request: QueuedRequest;
  /** Its state when it was claimed: `in_progress` means the server that ran it stopped. */
  state: RunState;
  cancelRequested: boolean;
  createdAt: number;
}

type Statement = [string, unknown[]];

interface RunStatements {
  /** After the claim's subquery: a lock so that two workers (replicas) never take the same run. */
  claimLock: string;
}

const statements: DialectStatements<RunStatements> = {
  sqlite: { claimLock: '' },
  postgres: { claimLock: 'FOR UPDATE SKIP LOCKED' },
};

/** Events per statement when they are appended, and per page when they are read. */
const EVENTS_PER_STATEMENT = 200;
const EVENTS_PER_PAGE = 500;

const RUN_COLUMNS = 'response_id, account_id, user_id, key_id, request, state, cancel_requested, created_at';

function toRun(row: Row): RunRecord {
  return {
    responseId: row.response_id as string,
    tenant: { accountId: row.account_id as string, userId: row.user_id as string },
    keyId: row.key_id as string,
    request: JSON.parse(row.request as string) as QueuedRequest,
    state: row.state as RunState,
    cancelRequested: Number(row.cancel_requested) === 1,
    createdAt: Number(row.created_at),
  };
}

function eventInserts(responseId: string, events: readonly ResponseEvent[]): Statement[] {
  const out: Statement[] = [];
  for (let start = 0; start < events.length; start += EVENTS_PER_STATEMENT) {
    const batch = events.slice(start, start + EVENTS_PER_STATEMENT);
    const rows = batch.map((_, i) => `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3})`).join(', ');
    out.push([
      // A worker that lost its lease unnoticed must not fail on the numbers its successor wrote.
      `INSERT INTO response_events (response_id, sequence_number, event) VALUES ${rows} ON CONFLICT DO NOTHING`,
      batch.flatMap((e) => [responseId, e.sequence_number, JSON.stringify(e)]),
    ]);
  }
  return out;
}

/**
 * The runs and event logs of background responses (`response_runs`, `response_events`) in the service's
 * database, shared by every replica's worker. A run is leased to one worker at a time; every write that ends
 * or advances one is conditional on holding its lease, so a worker that lost it (a pause past its lease, a
 * replica cut off) changes nothing its successor decided.
 */
export class SqlBackgroundRuns {
  readonly #db: Db;
  readonly #sql: RunStatements;

  constructor(db: Db) {
    this.#db = db;
    this.#sql = statements[db.dialect];
  }

  /** The queued response, its run and its first events, in one transaction. */
  async enqueue(
    response: StoredResponse,
    run: { keyId: string; request: QueuedRequest; at: number },
    events: readonly ResponseEvent[],
  ): Promise<void> {
    await this.#inTransaction(undefined, [
      ...putStatements(response),
      [
        `INSERT INTO response_runs (response_id, account_id, user_id, key_id, request, state, created_at)
         VALUES ($1, $2, $3, $4, $5, 'queued', $6)`,
        [
          response.id,
          response.tenant.accountId,
          response.tenant.userId,
          run.keyId,
          JSON.stringify(run.request),
          run.at,
        ],
      ],
      ...eventInserts(response.id, events),
    ]);
  }

  /** Leases the oldest run not done whose lease ran out (never leased, or its worker stopped) to `owner`. */
  async claim(now: number, leaseMs: number, owner: string): Promise<RunRecord | undefined> {
    const rows = await this.#db.query(
      `UPDATE response_runs SET lease_until = $1, lease_owner = $2, attempts = attempts + 1
       WHERE response_id IN (SELECT response_id FROM response_runs WHERE state <> 'done' AND lease_until < $3
                             ORDER BY created_at LIMIT 1 ${this.#sql.claimLock})
       RETURNING ${RUN_COLUMNS}`,
      [now + leaseMs, owner, now],
    );
    return rows[0] ? toRun(rows[0]) : undefined;
  }

  /** The same for one run (a cancel that finds its run unleased ends it itself). */
  async claimOne(id: string, now: number, leaseMs: number, owner: string): Promise<RunRecord | undefined> {
    const rows = await this.#db.query(
      `UPDATE response_runs SET lease_until = $1, lease_owner = $2, attempts = attempts + 1
       WHERE response_id = $3 AND state <> 'done' AND lease_until < $4
       RETURNING ${RUN_COLUMNS}`,
      [now + leaseMs, owner, id, now],
    );
    return rows[0] ? toRun(rows[0]) : undefined;
  }

  /**
   * `in_progress` with its response's body, committed before its first model call: from here on a crash
   * ends it `failed`, never runs it again. False when a cancel came first or the lease is lost.
   */
  async start(id: string, owner: string, body: ResponseBody): Promise<boolean> {
    return this.#inTransaction(
      [
        `UPDATE response_runs SET state = 'in_progress'
         WHERE response_id = $1 AND lease_owner = $2 AND state = 'queued' AND cancel_requested = 0
         RETURNING response_id`,
        [id, owner],
      ],
      [['UPDATE responses SET body = $1 WHERE id = $2', [JSON.stringify(body), id]]],
    );
  }

  /** A run claimed and not started goes back to the queue (its worker stops). */
  async release(id: string, owner: string): Promise<void> {
    await this.#db.query(
      `UPDATE response_runs SET lease_until = 0, lease_owner = NULL
       WHERE response_id = $1 AND lease_owner = $2 AND state = 'queued'`,
      [id, owner],
    );
  }

  /** Extends the leases of `ids` that `owner` still holds; returns those. */
  async renew(ids: readonly string[], owner: string, until: number): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.#db.query<{ response_id: string }>(
      `UPDATE response_runs SET lease_until = $1
       WHERE lease_owner = $2 AND state <> 'done' AND response_id IN (${placeholderList(ids.length, 3)})
       RETURNING response_id`,
      [until, owner, ...ids],
    );
    return new Set(rows.map((r) => r.response_id));
  }

  /** The runs `owner` holds whose cancel was asked for. */
  async cancelled(owner: string): Promise<string[]> {
    const rows = await this.#db.query<{ response_id: string }>(
      `SELECT response_id FROM response_runs WHERE lease_owner = $1 AND cancel_requested = 1 AND state <> 'done'`,
      [owner],
    );
    return rows.map((r) => r.response_id);
  }

  /** Marks the run to be cancelled; its state, or undefined when it has none (not a background response). */
  async requestCancel(id: string): Promise<RunState | undefined> {
    const [row] = await this.#db.query(
      'UPDATE response_runs SET cancel_requested = 1 WHERE response_id = $1 AND state <> $2 RETURNING state',
      [id, 'done'],
    );
    return row ? (row.state as RunState) : undefined;
  }

  async state(id: string): Promise<RunState | undefined> {
    const [row] = await this.#db.query('SELECT state FROM response_runs WHERE response_id = $1', [id]);
    return row ? (row.state as RunState) : undefined;
  }

  /** Stored events after `after`, in order, a page at a time. */
  async events(id: string, after: number): Promise<ResponseEvent[]> {
    const rows = await this.#db.query<{ event: string }>(
      `SELECT event FROM response_events WHERE response_id = $1 AND sequence_number > $2
       ORDER BY sequence_number LIMIT ${EVENTS_PER_PAGE}`,
      [id, after],
    );
    return rows.map((r) => JSON.parse(r.event) as ResponseEvent);
  }

  /** The last stored event, if any. */
  async lastEvent(id: string): Promise<ResponseEvent | undefined> {
    const [row] = await this.#db.query<{ event: string }>(
      'SELECT event FROM response_events WHERE response_id = $1 ORDER BY sequence_number DESC LIMIT 1',
      [id],
    );
    return row ? (JSON.parse(row.event) as ResponseEvent) : undefined;
  }

  async append(id: string, events: readonly ResponseEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.#inTransaction(undefined, eventInserts(id, events));
  }

  /**
   * The run is done, with its last events (and its response's final body, when the run did not store it), in
   * one transaction; nothing when `owner` lost its lease meanwhile. Says whether it was written.
   */
  async end(id: string, owner: string, events: readonly ResponseEvent[], body?: ResponseBody): Promise<boolean> {
    return this.#inTransaction(
      [
        // Its request is not needed any more (its input items are the response's).
        `UPDATE response_runs SET state = 'done', lease_owner = NULL, lease_until = 0, request = ''
         WHERE response_id = $1 AND lease_owner = $2 AND state <> 'done' RETURNING response_id`,
        [id, owner],
      ],
      [
        ...(body ? [['UPDATE responses SET body = $1 WHERE id = $2', [JSON.stringify(body), id]] as Statement] : []),
        ...eventInserts(id, events),
      ],
    );
  }

  /** This process is the database's only writer (SQLite owner): a previous run's leases are void. */
  async releaseLeases(): Promise<void> {
    await this.#db.query(`UPDATE response_runs SET lease_until = 0, lease_owner = NULL WHERE state <> 'done'`);
  }

  /** The run and its events, gone (its response was deleted). */
  async remove(id: string): Promise<void> {
    await this.#inTransaction(undefined, [
      ['DELETE FROM response_events WHERE response_id = $1', [id]],
      ['DELETE FROM response_runs WHERE response_id = $1', [id]],
    ]);
  }

  /** The end user's runs not done yet. */
  async pendingOf(tenant: Tenant): Promise<string[]> {
    const rows = await this.#db.query<{ response_id: string }>(
      `SELECT response_id FROM response_runs WHERE account_id = $1 AND user_id = $2 AND state <> 'done'`,
      [tenant.accountId, tenant.userId],
    );
    return rows.map((r) => r.response_id);
  }

  /** Every run of the end user and its events, gone. */
  async removeTenant(tenant: Tenant): Promise<void> {
    const params = [tenant.accountId, tenant.userId];
    await this.#inTransaction(undefined, [
      [
        `DELETE FROM response_events WHERE response_id IN
           (SELECT response_id FROM response_runs WHERE account_id = $1 AND user_id = $2)`,
        params,
      ],
      ['DELETE FROM response_runs WHERE account_id = $1 AND user_id = $2', params],
    ]);
  }

  /**
   * `then` in one transaction, after `guard` (a statement returning rows) when there is one: when the guard
   * returns no row, nothing else runs. Says whether `then` ran.
   */
  async #inTransaction(guard: Statement | undefined, then: readonly Statement[]): Promise<boolean> {
    const db = this.#db;
    if (db.dialect === 'sqlite') {
      return transaction(db, (tx) => {
        if (guard && tx.query(guard[0], guard[1]).length === 0) return false;
        for (const [sql, params] of then) tx.query(sql, params);
        return true;
      });
    }
    return transaction(db, async (tx) => {
      if (guard && (await tx.query(guard[0], guard[1])).length === 0) return false;
      for (const [sql, params] of then) await tx.query(sql, params);
      return true;
    });
  }
}
