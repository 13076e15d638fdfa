import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The embedded server's write-ahead log of what it writes behind (storage/staging-log.ts): each commit's items
 * of a stream as one JSON row, and the keys of a generation already written where they belong. Only the
 * SQLite server that owns its file writes them; on PostgreSQL they stay empty.
 */
export class StagingLog1765100000000 implements MigrationInterface {
  name = 'StagingLog1765100000000';

  async up(runner: QueryRunner): Promise<void> {
    const bigint = runner.connection.options.type === 'postgres' ? 'BIGSERIAL' : 'INTEGER';
    await runner.query(`CREATE TABLE staging_log (
      seq ${bigint} PRIMARY KEY,
      stream TEXT NOT NULL,
      gen INTEGER NOT NULL,
      body TEXT NOT NULL
    )`);
    await runner.query(`CREATE TABLE staging_done (
      stream TEXT NOT NULL,
      gen INTEGER NOT NULL,
      first_key TEXT NOT NULL,
      last_key TEXT NOT NULL
    )`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE IF EXISTS staging_done');
    await runner.query('DROP TABLE IF EXISTS staging_log');
  }
}
