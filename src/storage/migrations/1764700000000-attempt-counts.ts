import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Attempts counted per key and window by the throttles of failed credentials (`limits/`'s
 * SqlAttemptCounter: the dashboard's sign-in on both databases, failed API keys on PostgreSQL), so
 * replicas sharing the database share the counts. One row per key; rows whose window has ended are
 * deleted by the next attempt, found through the index on `window_end`.
 */
export class AttemptCounts1764700000000 implements MigrationInterface {
  name = 'AttemptCounts1764700000000';

  async up(runner: QueryRunner): Promise<void> {
    const bigint = runner.connection.options.type === 'postgres' ? 'BIGINT' : 'INTEGER';
    await runner.query(`CREATE TABLE attempt_counts (
      key TEXT PRIMARY KEY,
      attempts INTEGER NOT NULL,
      window_end ${bigint} NOT NULL
    )`);
    await runner.query('CREATE INDEX attempt_counts_window_end ON attempt_counts (window_end)');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE IF EXISTS attempt_counts');
  }
}
