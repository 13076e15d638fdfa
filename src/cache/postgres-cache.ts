import { assertValidTtl, expiresAtFor, normaliseCreatedAt, serializeBody, wholeMs } from './cache-entry.js';
import type { CachedResponse, ResponseCache } from './response-cache.js';

/**
 * The one thing the adapter needs from the database: run a parameterised
 * statement and hand back rows. Taking this instead of a pg.Pool keeps the
 * adapter independent of how the app connects; `pool.query.bind(pool)` fits.
 */
export type SqlQuery = (sql: string, params: unknown[]) => Promise<{ rows: Record<string, unknown>[] }>;

export interface PostgresCacheOptions {
  /** Epoch-millisecond clock; injectable so tests can expire entries without sleeping. */
  now?: () => number;
  /** How often the background sweep deletes expired rows. Default one minute. */
  sweepIntervalMs?: number;
  /**
   * Told when a background sweep fails. The default ignores the failure: the
   * cache is best-effort, expired rows are never returned anyway, and the
   * next sweep retries.
   */
  onSweepError?: (error: unknown) => void;
}

export interface PostgresResponseCache extends ResponseCache {
  /** Deletes every expired row now and says how many went. The timer calls this too. */
  sweepExpired(): Promise<number>;
}

const DEFAULT_SWEEP_INTERVAL_MS = 60_000;

// The CTE deletes the key's row if it has expired (lazy cleanup) in the same
// round trip as the read. Both parts see the same snapshot, and the SELECT
// filters on expiry itself, so it never returns what the DELETE removes.
// body is read as text and parsed here so the result doesn't depend on the
// driver's type parsers, and every get yields a fresh object.
const GET_SQL = `
WITH expired AS (
  DELETE FROM response_cache WHERE key = $1 AND expires_at <= $2
)
SELECT body::text AS body_json, created_at
FROM response_cache
WHERE key = $1 AND expires_at > $2`;

const UPSERT_SQL = `
INSERT INTO response_cache (key, body, created_at, expires_at)
VALUES ($1, $2::json, $3, $4)
ON CONFLICT (key) DO UPDATE
SET body = EXCLUDED.body, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at`;

const DELETE_SQL = 'DELETE FROM response_cache WHERE key = $1';

const SWEEP_SQL = `
WITH swept AS (
  DELETE FROM response_cache WHERE expires_at <= $1 RETURNING 1
)
SELECT count(*)::int AS deleted FROM swept`;

/**
 * Response cache in a PostgreSQL table shared by all replicas. The table
 * (RESPONSE_CACHE_POSTGRES_DDL, in the initial migration) must already exist; the adapter resolves it
 * through the connection's search_path.
 */
export function createPostgresCache(query: SqlQuery, options: PostgresCacheOptions = {}): PostgresResponseCache {
  const now = options.now ?? Date.now;
  const sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  if (!Number.isFinite(sweepIntervalMs) || sweepIntervalMs <= 0) {
    throw new RangeError(`Postgres cache sweepIntervalMs must be positive, got ${sweepIntervalMs}`);
  }
  const onSweepError = options.onSweepError ?? (() => {});

  async function sweepExpired(): Promise<number> {
    const { rows } = await query(SWEEP_SQL, [wholeMs(now())]);
    return Number(rows[0]?.deleted ?? 0);
  }

  // Skip a tick while the previous sweep still runs, so a slow database
  // doesn't pile up overlapping DELETEs.
  let sweeping = false;
  const sweepTimer = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    sweepExpired()
      .catch(onSweepError)
      .finally(() => {
        sweeping = false;
      });
  }, sweepIntervalMs);
  // The sweep is housekeeping; it must never keep the process alive.
  sweepTimer.unref();

  return {
    async get(key) {
      const { rows } = await query(GET_SQL, [key, wholeMs(now())]);
      const row = rows[0];
      if (row === undefined) return undefined;
      const hit: CachedResponse = {
        body: JSON.parse(String(row.body_json)) as unknown,
        // bigint columns arrive as strings from pg; the values fit a double.
        createdAt: Number(row.created_at),
      };
      return hit;
    },

    async set(key, value, ttlMs) {
      assertValidTtl(ttlMs);
      const body = serializeBody(value.body);
      const createdAt = normaliseCreatedAt(value.createdAt);
      await query(UPSERT_SQL, [key, body, createdAt, expiresAtFor(now(), ttlMs)]);
    },

    async delete(key) {
      await query(DELETE_SQL, [key]);
    },

    async close() {
      clearInterval(sweepTimer);
    },

    sweepExpired,
  };
}
