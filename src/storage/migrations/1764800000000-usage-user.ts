import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The end user a request named, on its usage row (null when it named none), so that an end user's rows can be
 * exported and, when the user is erased, kept without the user id. Rows stored before have none. The index
 * holds only rows that name a user (partial on both dialects) and serves the export and the erase, which read
 * one user of one account; the hourly and daily sums never look at the column.
 */
export class UsageUser1764800000000 implements MigrationInterface {
  name = 'UsageUser1764800000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE usage_records ADD COLUMN user_id TEXT');
    await runner.query(
      'CREATE INDEX usage_records_user ON usage_records (account_id, user_id, id) WHERE user_id IS NOT NULL',
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP INDEX IF EXISTS usage_records_user');
    await runner.query('ALTER TABLE usage_records DROP COLUMN user_id');
  }
}
