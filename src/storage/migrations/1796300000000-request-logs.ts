import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Request logs an account holder reads (`GET /z1/logs`, the dashboard's Logs page): one row per authenticated
 * request, kept `logs.retentionDays` (swept by `created_at`). `content_input` and `content_output` hold the request's
 * and the answer's text only for an account whose `log_content` is on (off by default). Read newest first by
 * (account_id, created_at, id); an end user's rows are found by (account_id, user_id) for their export and erase.
 */
export class RequestLogs1796300000000 implements MigrationInterface {
  name = 'RequestLogs1796300000000';

  async up(runner: QueryRunner): Promise<void> {
    const postgres = runner.connection.options.type === 'postgres';
    const bigint = postgres ? 'BIGINT' : 'INTEGER';
    const serial = postgres ? 'BIGSERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT';
    const statements = [
      `CREATE TABLE request_logs (
        id ${serial},
        account_id TEXT NOT NULL,
        key_id TEXT,
        request_id TEXT NOT NULL,
        user_id TEXT,
        endpoint TEXT NOT NULL,
        model TEXT,
        status INTEGER NOT NULL,
        failed_status INTEGER,
        error_code TEXT,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        credits ${bigint} NOT NULL,
        latency_ms INTEGER NOT NULL,
        cached INTEGER NOT NULL,
        created_at ${bigint} NOT NULL,
        content_input TEXT,
        content_output TEXT,
        content_truncated INTEGER NOT NULL DEFAULT 0
      )`,
      'CREATE INDEX request_logs_account_time ON request_logs (account_id, created_at, id)',
      'CREATE INDEX request_logs_user ON request_logs (account_id, user_id)',
      'CREATE INDEX request_logs_request ON request_logs (account_id, request_id)',
      'CREATE INDEX request_logs_time ON request_logs (created_at)',
      'ALTER TABLE accounts ADD COLUMN log_content INTEGER NOT NULL DEFAULT 0',
    ];
    for (const sql of statements) await runner.query(sql);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query('ALTER TABLE accounts DROP COLUMN log_content');
    await runner.query('DROP TABLE IF EXISTS request_logs');
  }
}
