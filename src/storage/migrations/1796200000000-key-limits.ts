import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A key's own limits: a credit budget (`budget_credits` per `budget_period`, 'month' or 'total'), the credits spent
 * through it in the period starting at `spend_period_start` (ms; 0 for 'total'), its own RPM/RPD, a model
 * allow-list and metadata (JSON text), an expiry. Null: no such limit. A dashboard session's `flash` holds what the
 * page after a redirect shows once (a new key's secret, sealed with the session cookie's token, which is not stored).
 */
export class KeyLimits1796200000000 implements MigrationInterface {
  name = 'KeyLimits1796200000000';

  async up(runner: QueryRunner): Promise<void> {
    const bigint = runner.connection.options.type === 'postgres' ? 'BIGINT' : 'INTEGER';
    const columns = [
      `budget_credits ${bigint}`,
      'budget_period TEXT',
      `spend_credits ${bigint} NOT NULL DEFAULT 0`,
      `spend_period_start ${bigint} NOT NULL DEFAULT 0`,
      'rpm INTEGER',
      'rpd INTEGER',
      'models TEXT',
      `expires_at ${bigint}`,
      'metadata TEXT',
    ];
    for (const column of columns) await runner.query(`ALTER TABLE api_keys ADD COLUMN ${column}`);
    await runner.query('ALTER TABLE dashboard_sessions ADD COLUMN flash TEXT');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE dashboard_sessions DROP COLUMN flash');
    const names = ['budget_credits', 'budget_period', 'spend_credits', 'spend_period_start', 'rpm', 'rpd'];
    for (const name of [...names, 'models', 'expires_at', 'metadata']) {
      await runner.query(`ALTER TABLE api_keys DROP COLUMN ${name}`);
    }
  }
}
