import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The developer dashboard: its sign-in sessions (server-side, so every replica sharing the database
 * knows them; only a hash of the cookie's token is stored), and the daily usage rollup its charts read
 * (one row per account, UTC day and model, kept up to date as usage rows are written).
 */
export class Dashboard1764300000000 implements MigrationInterface {
  name = 'Dashboard1764300000000';

  async up(runner: QueryRunner): Promise<void> {
    const pg = runner.connection.options.type === 'postgres';
    const bigint = pg ? 'BIGINT' : 'INTEGER';
    const statements = [
      `CREATE TABLE dashboard_sessions (
        token_hash TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        csrf_token TEXT NOT NULL,
        created_at ${bigint} NOT NULL,
        expires_at ${bigint} NOT NULL
      )`,
      'CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at)',
      `CREATE TABLE usage_daily (
        account_id TEXT NOT NULL,
        day ${bigint} NOT NULL,
        model TEXT NOT NULL,
        requests ${bigint} NOT NULL,
        credits ${bigint} NOT NULL,
        prompt_tokens ${bigint} NOT NULL,
        completion_tokens ${bigint} NOT NULL,
        PRIMARY KEY (account_id, day, model)
      )`,
      // The rows written before the rollup existed, summed once.
      `INSERT INTO usage_daily (account_id, day, model, requests, credits, prompt_tokens, completion_tokens)
        SELECT account_id, created_at - (created_at % 86400000), coalesce(model, ''), count(*),
               coalesce(sum(credits), 0), coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0)
          FROM usage_records GROUP BY account_id, created_at - (created_at % 86400000), coalesce(model, '')`,
    ];
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['dashboard_sessions', 'usage_daily']) await runner.query(`DROP TABLE IF EXISTS ${table}`);
  }
}
