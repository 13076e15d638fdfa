import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Stored responses of the Responses API, per (account, end user): the response as it was returned, and the
 * conversation it ends (its input and output as chat messages), which a response naming it in
 * `previous_response_id` continues. Its items (input and output, with their ids) are rows of their own, for
 * `GET /z1/responses/{id}/input_items` and for an `item_reference` to an item of an earlier response.
 */
export class Responses1765000000000 implements MigrationInterface {
  name = 'Responses1765000000000';

  async up(runner: QueryRunner): Promise<void> {
    const bigint = runner.connection.options.type === 'postgres' ? 'BIGINT' : 'INTEGER';
    const statements = [
      `CREATE TABLE responses (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        created_at ${bigint} NOT NULL,
        body TEXT NOT NULL,
        conversation TEXT NOT NULL
      )`,
      'CREATE INDEX responses_tenant ON responses (account_id, user_id, created_at)',
      `CREATE TABLE response_items (
        response_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        ordinal INTEGER NOT NULL,
        id TEXT NOT NULL,
        account_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        item TEXT NOT NULL,
        PRIMARY KEY (response_id, kind, ordinal)
      )`,
      'CREATE INDEX response_items_by_id ON response_items (account_id, user_id, id)',
    ];
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    for (const table of ['response_items', 'responses']) await runner.query(`DROP TABLE IF EXISTS ${table}`);
  }
}
