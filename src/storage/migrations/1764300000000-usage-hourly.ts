import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An hourly rollup of usage rows per account and model, maintained on write with upserts that add, so
 * GET /z1/usage sums at most one row per model and hour over the whole hours of a period and reads raw
 * rows only for its partial first and last hour. Filled from the rows already stored.
 */
export class UsageHourly1764300000000 implements MigrationInterface {
  name = 'UsageHourly1764300000000';

  async up(runner: QueryRunner): Promise<void> {
    const bigint = runner.connection.options.type === 'postgres' ? 'BIGINT' : 'INTEGER';
    await runner.query(`CREATE TABLE usage_hourly (
      account_id TEXT NOT NULL,
      hour ${bigint} NOT NULL,
      model TEXT NOT NULL,
      requests ${bigint} NOT NULL,
      credits ${bigint} NOT NULL,
      prompt_tokens ${bigint} NOT NULL,
      completion_tokens ${bigint} NOT NULL,
      PRIMARY KEY (account_id, hour, model)
    )`);
    await runner.query(`INSERT INTO usage_hourly (account_id, hour, model, requests, credits, prompt_tokens, completion_tokens)
      SELECT account_id, created_at - (created_at % 3600000), coalesce(model, ''), count(*), coalesce(sum(credits), 0),
             coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0)
        FROM usage_records GROUP BY account_id, created_at - (created_at % 3600000), coalesce(model, '')`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE usage_hourly');
  }
}
