import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A key may be bound to one end user of its account (`pvai keys create --user-id`): a request through it that
 * names no end user acts for them, and one naming another is refused. Null: bound to none.
 */
export class KeyEndUser1765200000000 implements MigrationInterface {
  name = 'KeyEndUser1765200000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE api_keys ADD COLUMN user_id TEXT');
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE api_keys DROP COLUMN user_id');
  }
}
