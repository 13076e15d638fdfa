import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts, keys, usage and rate-limit state. Times are integer milliseconds since the epoch on
 * both dialects so the repositories' SQL is the same for SQLite and PostgreSQL.
 */
export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(runner: QueryRunner): Promise<void> {
    const pg = runner.connection.options.type === 'postgres';
    const bigint = pg ? 'BIGINT' : 'INTEGER';
    const serial = pg ? 'BIGSERIAL PRIMARY KEY' : 'INTEGER PRIMARY KEY AUTOINCREMENT';
    const bool = pg ? 'BOOLEAN' : 'INTEGER';
    const statements = [
      `CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        tier TEXT NOT NULL,
        credits ${bigint} NOT NULL DEFAULT 0 CHECK (credits >= 0),
        password_hash TEXT,
        created_at ${bigint} NOT NULL
      )`,
      `CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        key_hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        name TEXT,
        created_at ${bigint} NOT NULL,
        last_used_at ${bigint},
        revoked_at ${bigint}
      )`,
      'CREATE INDEX api_keys_account ON api_keys (account_id)',
      `CREATE TABLE usage_records (
        id ${serial},
        account_id TEXT NOT NULL,
        key_id TEXT,
        request_id TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        model TEXT,
        status INTEGER NOT NULL,
        prompt_tokens INTEGER NOT NULL DEFAULT 0,
        completion_tokens INTEGER NOT NULL DEFAULT 0,
        credits INTEGER NOT NULL DEFAULT 0,
        latency_ms INTEGER NOT NULL,
        cached ${bool} NOT NULL DEFAULT ${pg ? 'FALSE' : '0'},
        created_at ${bigint} NOT NULL
      )`,
      'CREATE INDEX usage_records_account_time ON usage_records (account_id, created_at)',
      // Sliding-minute log: at most `rpm` rows per account survive each admission's cleanup.
      `CREATE TABLE rate_limit_events (account_id TEXT NOT NULL, at_ms ${bigint} NOT NULL)`,
      'CREATE INDEX rate_limit_events_account_time ON rate_limit_events (account_id, at_ms)',
      `CREATE TABLE rate_limit_counters (
        account_id TEXT NOT NULL,
        window_name TEXT NOT NULL,
        period_start ${bigint} NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (account_id, window_name, period_start)
      )`,
    ];
    for (const sql of statements) await runner.query(sql);
    if (pg) {
      await runner.query(ADMIT_FUNCTION_POSTGRES);
      await runner.query(RESPONSE_CACHE_POSTGRES_DDL);
    }
  }

  async down(runner: QueryRunner): Promise<void> {
    const pg = runner.connection.options.type === 'postgres';
    if (pg) {
      await runner.query('DROP TABLE IF EXISTS response_cache');
      await runner.query('DROP FUNCTION IF EXISTS pvai_admit');
    }
    for (const table of ['rate_limit_counters', 'rate_limit_events', 'usage_records', 'api_keys', 'accounts']) {
      await runner.query(`DROP TABLE IF EXISTS ${table}`);
    }
  }
}

/**
 * One round trip per admission. The advisory lock serialises admissions of one account across
 * every replica, so N concurrent requests against R remaining admit exactly R. Counts returned are
 * those before this request; the caller derives remaining and reset times from them.
 */
const ADMIT_FUNCTION_POSTGRES = `
CREATE OR REPLACE FUNCTION pvai_admit(
  p_account TEXT, p_now BIGINT, p_rpm INTEGER, p_rpd INTEGER, p_monthly INTEGER,
  p_day_start BIGINT, p_month_start BIGINT, p_consume BOOLEAN
) RETURNS TABLE (admitted BOOLEAN, minute_count INTEGER, minute_oldest BIGINT, day_count INTEGER, month_count INTEGER)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('pvai_rate_limit:' || p_account, 0));
  DELETE FROM rate_limit_events WHERE account_id = p_account AND at_ms <= p_now - 60000;
  SELECT count(*)::INTEGER, min(at_ms) INTO minute_count, minute_oldest
    FROM rate_limit_events WHERE account_id = p_account;
  SELECT coalesce(max(count), 0) INTO day_count FROM rate_limit_counters
    WHERE account_id = p_account AND window_name = 'day' AND period_start = p_day_start;
  SELECT coalesce(max(count), 0) INTO month_count FROM rate_limit_counters
    WHERE account_id = p_account AND window_name = 'month' AND period_start = p_month_start;
  admitted := minute_count < p_rpm AND day_count < p_rpd AND month_count < p_monthly;
  IF admitted AND p_consume THEN
    INSERT INTO rate_limit_events (account_id, at_ms) VALUES (p_account, p_now);
    INSERT INTO rate_limit_counters AS c (account_id, window_name, period_start, count)
      VALUES (p_account, 'day', p_day_start, 1), (p_account, 'month', p_month_start, 1)
      ON CONFLICT (account_id, window_name, period_start) DO UPDATE SET count = c.count + 1;
    DELETE FROM rate_limit_counters WHERE account_id = p_account
      AND ((window_name = 'day' AND period_start < p_day_start) OR (window_name = 'month' AND period_start < p_month_start));
  END IF;
  RETURN NEXT;
END
$$`;

/**
 * DDL for the shared response cache (PostgreSQL only; the embedded default caches in process). It is
 * idempotent, and part of this migration: a migration is a snapshot, so later changes to the cache's
 * table come as new migrations. It holds two statements, so run it without bind
 * parameters (pg then uses the simple query protocol, which allows several).
 *
 * - UNLOGGED: a cache needs no crash safety or replication to standbys, and
 *   skipping the WAL makes writes markedly cheaper. After a crash PostgreSQL
 *   truncates the table, which for a cache only means a cold start.
 * - `body json`, not `jsonb`: `json` keeps the completion's text exactly as
 *   produced (key order included, so a replay is byte-identical to what the
 *   memory adapter returns) and accepts "\u0000" inside strings, which `jsonb`
 *   rejects. The cache never queries inside bodies, so jsonb buys nothing.
 * - Times are epoch milliseconds (bigint) from the adapter's clock, not the
 *   database's, so expiry follows one clock that tests can control.
 * - The expires_at index serves the periodic sweep.
 */
export const RESPONSE_CACHE_POSTGRES_DDL = `
CREATE UNLOGGED TABLE IF NOT EXISTS response_cache (
  key text PRIMARY KEY,
  body json NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS response_cache_expires_at_idx ON response_cache (expires_at);
`;
