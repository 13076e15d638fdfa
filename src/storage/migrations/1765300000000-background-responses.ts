import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Background responses (`background: true`). `response_runs` is their durable queue: one row per response, with
 * the request to run (its input items with their ids), the key that created it (to act as it), the state
 * (`queued`, `in_progress` once its first model call may have been made, `done` once its response is final),
 * a lease (owner and end) that any replica's worker claims and renews, and the cancel a `POST …/cancel` asks
 * for (the worker running it polls the flag). `response_events` is each response's numbered events, kept as
 * long as the response, for `GET …?stream=true&starting_after=N`.
 */
export class BackgroundResponses1765300000000 implements MigrationInterface {
  name = 'BackgroundResponses1765300000000';

  async up(runner: QueryRunner): Promise<void> {
    const bigint = runner.connection.options.type === 'postgres' ? 'BIGINT' : 'INTEGER';
    const statements = [
      `CREATE TABLE response_runs (
        response_id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        key_id TEXT NOT NULL,
        request TEXT NOT NULL,
        state TEXT NOT NULL,
        lease_until ${bigint} NOT NULL DEFAULT 0,
        lease_owner TEXT,
        attempts INTEGER NOT NULL DEFAULT 0,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        created_at ${bigint} NOT NULL
      )`,
      // What a worker claims: the runs not done, oldest first; and the runs a worker holds (its cancel poll).
      `CREATE INDEX response_runs_pending ON response_runs (created_at) WHERE state <> 'done'`,
      `CREATE INDEX response_runs_leased ON response_runs (lease_owner) WHERE state <> 'done'`,
      'CREATE INDEX response_runs_tenant ON response_runs (account_id, user_id)',
      `CREATE TABLE response_events (
        response_id TEXT NOT NULL,
        sequence_number INTEGER NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (response_id, sequence_number)
      )`,
    ];
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['response_events', 'response_runs']) await runner.query(`DROP TABLE IF EXISTS ${table}`);
  }
}
