/**
 * DDL for the shared response cache. The database migration imports and runs
 * this; it is idempotent. It holds two statements, so run it without bind
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
