import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Memories per (account, user) and their history. A memory's `slot` names what it is about when only one
 * value can hold (name, where the user lives): a new fact for the slot supersedes the memory, and the
 * history keeps what it said before with the time it changed. Retrieval (lexical and dense) is the
 * memory chunk index's; these tables are the source of truth.
 */
export class Memory1764500000000 implements MigrationInterface {
  name = 'Memory1764500000000';

  async up(runner: QueryRunner): Promise<void> {
    const pg = runner.connection.options.type === 'postgres';
    const bigint = pg ? 'BIGINT' : 'INTEGER';
    const statements = [
      `CREATE TABLE memories (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        content TEXT NOT NULL,
        metadata TEXT NOT NULL,
        source TEXT NOT NULL,
        slot TEXT,
        created_at ${bigint} NOT NULL,
        updated_at ${bigint} NOT NULL
      )`,
      'CREATE INDEX memories_tenant ON memories (account_id, user_id, updated_at)',
      'CREATE INDEX memories_slot ON memories (account_id, user_id, slot)',
      `CREATE TABLE memory_history (
        seq ${pg ? 'BIGSERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT'},
        memory_id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        event TEXT NOT NULL,
        content TEXT NOT NULL,
        previous_content TEXT,
        source TEXT NOT NULL,
        at ${bigint} NOT NULL
      )`,
      'CREATE INDEX memory_history_tenant ON memory_history (account_id, user_id, memory_id, seq)',
      // The user's memory version, read into the chat cache key: a fresh random token at every change
      // (not a counter, so forgetting the user can delete the row without a later count repeating an old
      // version). No row means no memories.
      `CREATE TABLE memory_user_versions (
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        version TEXT NOT NULL,
        PRIMARY KEY (account_id, user_id)
      )`,
    ];
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['memory_history', 'memories', 'memory_user_versions']) {
      await runner.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}
