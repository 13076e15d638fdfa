import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The developer dashboard's sign-in sessions: server-side, so every replica sharing the database knows
 * them; only a hash of the cookie's token is stored. (Its usage charts read `usage_hourly`, the rollup
 * of UsageDaily1764300000000.)
 */
export class Dashboard1764400000000 implements MigrationInterface {
  name = 'Dashboard1764400000000';

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
    ];
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE IF EXISTS dashboard_sessions');
  }
}
