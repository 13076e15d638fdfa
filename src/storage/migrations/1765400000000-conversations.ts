import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Conversations of OpenAI's Conversations API, per (account, end user), and their items in order. A
 * conversation hands out its items' ordinals (`next_ordinal`): the update that takes them serialises appends to
 * one conversation on PostgreSQL, and deleted items leave gaps that order nothing differently. An item id is
 * unique within its conversation (the item a `GET …/items/{id}` or an `after` names); items carry the tenant so an
 * erase deletes them without a join.
 */
export class Conversations1765400000000 implements MigrationInterface {
  name = 'Conversations1765400000000';

  async up(runner: QueryRunner): Promise<void> {
    const bigint = runner.connection.options.type === 'postgres' ? 'BIGINT' : 'INTEGER';
    const statements = [
      `CREATE TABLE conversations (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        created_at ${bigint} NOT NULL,
        metadata TEXT NOT NULL,
        next_ordinal INTEGER NOT NULL
      )`,
      'CREATE INDEX conversations_tenant ON conversations (account_id, user_id, id)',
      `CREATE TABLE conversation_items (
        conversation_id TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        item TEXT NOT NULL,
        PRIMARY KEY (conversation_id, ordinal)
      )`,
      'CREATE UNIQUE INDEX conversation_items_by_id ON conversation_items (conversation_id, id)',
      'CREATE INDEX conversation_items_tenant ON conversation_items (account_id, user_id)',
    ];
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['conversation_items', 'conversations']) await runner.query(`DROP TABLE IF EXISTS ${table}`);
  }
}
