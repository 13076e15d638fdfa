import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The ids of the write-behind batches (usage rows, SLA buckets) committed on PostgreSQL, so that a batch retried
 * after a commit whose answer was lost is not written twice (`storage/write-batches.ts`). Kept a week, pruned by
 * `written_at`. Made on SQLite too, so both schemas stay one; nothing writes it there.
 */
export class WriteBatches1765450000000 implements MigrationInterface {
  name = 'WriteBatches1765450000000';

  async up(runner: QueryRunner): Promise<void> {
    const bigint = runner.connection.options.type === 'postgres' ? 'BIGINT' : 'INTEGER';
    await runner.query(`CREATE TABLE write_batches (id TEXT PRIMARY KEY, written_at ${bigint} NOT NULL)`);
    await runner.query('CREATE INDEX write_batches_written_at ON write_batches (written_at)');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE IF EXISTS write_batches');
  }
}
