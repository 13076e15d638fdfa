import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The memory extraction queue, durable: an answered chat turn that may state a fact is stored here before its
 * answer goes out, and any worker (this process after a restart, or another replica) extracts it under a lease.
 * Only the head of each end user's queue is claimable (`memory_extractions_tenant`), so one user's turns are
 * reconciled in the order they were said, by one worker at a time.
 *
 * Slots are renamed to the kinds the statement extractor writes (`location` → `home`, `employer` and
 * `occupation` → `work`), so a fact stored by the earlier rule-based extractor is superseded by a new one.
 */
export class MemoryExtractions1764900000000 implements MigrationInterface {
  name = 'MemoryExtractions1764900000000';

  async up(runner: QueryRunner): Promise<void> {
    const pg = runner.connection.options.type === 'postgres';
    const bigint = pg ? 'BIGINT' : 'INTEGER';
    await runner.query(`CREATE TABLE memory_extractions (
      id ${pg ? 'BIGSERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
      account_id TEXT NOT NULL,
      user_id TEXT NOT NULL,
      turn TEXT NOT NULL,
      created_at ${bigint} NOT NULL,
      lease_until ${bigint} NOT NULL DEFAULT 0,
      lease_owner TEXT,
      attempts INTEGER NOT NULL DEFAULT 0
    )`);
    await runner.query('CREATE INDEX memory_extractions_tenant ON memory_extractions (account_id, user_id, id)');
    for (const [from, to] of [
      ['location', 'home'],
      ['employer', 'work'],
      ['occupation', 'work'],
    ]) {
      // Constants of this file, not input: inlined, as TypeORM's drivers bind parameters differently.
      await runner.query(`UPDATE memories SET slot = '${to}' WHERE slot = '${from}'`);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE IF EXISTS memory_extractions');
  }
}
