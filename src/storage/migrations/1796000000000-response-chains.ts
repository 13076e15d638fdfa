import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A stored response keeps only its own turn of the conversation and a link to the stored response it continues
 * (`previous_response_id`): the whole conversation is read by walking the links, so a chain of N responses
 * stores N turns, not N whole conversations. `chain_depth` (responses in the chain, itself included) and
 * `context_bytes` (the chain's conversation, in bytes) are kept per row so the chain's limits are checked
 * without walking it. Rows stored before have no link and hold their whole conversation: depth 1, their own
 * conversation's size (characters: close enough for a limit).
 */
export class ResponseChains1796000000000 implements MigrationInterface {
  name = 'ResponseChains1796000000000';

  async up(runner: QueryRunner): Promise<void> {
    const bigint = runner.connection.options.type === 'postgres' ? 'BIGINT' : 'INTEGER';
    const statements = [
      'ALTER TABLE responses ADD COLUMN previous_response_id TEXT',
      'ALTER TABLE responses ADD COLUMN chain_depth INTEGER NOT NULL DEFAULT 1',
      `ALTER TABLE responses ADD COLUMN context_bytes ${bigint} NOT NULL DEFAULT 0`,
      'UPDATE responses SET context_bytes = LENGTH(conversation)',
    ];
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const column of ['context_bytes', 'chain_depth', 'previous_response_id']) {
      await runner.query(`ALTER TABLE responses DROP COLUMN ${column}`);
    }
  }
}
