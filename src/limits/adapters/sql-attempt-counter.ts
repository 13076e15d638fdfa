import { type Db, placeholderList } from '../../storage/index.js';
import type { AttemptCount, AttemptCounter } from '../attempt-counter.js';

/** How often, at most, one process deletes the windows that have ended (on an attempt, not on a timer). */
const PRUNE_EVERY_MS = 60_000;

/**
 * Attempts in the table `attempt_counts` (one row per key and window; SQLite and PostgreSQL alike), so
 * replicas sharing a PostgreSQL database share the counts, and a restart keeps them. An attempt is one
 * upsert that opens a new window when the stored one has ended, adds one otherwise, and returns the count:
 * atomic per row on both databases, so concurrent attempts on several replicas are each counted once.
 * Windows that ended are deleted at most once a minute per process, by the next attempt.
 */
export class SqlAttemptCounter implements AttemptCounter {
  readonly windowMs: number;
  readonly #db: Db;
  readonly #scope: string;
  #prunedAt = Number.NEGATIVE_INFINITY;

  /** `scope` prefixes every key, so counters of different windows never share a row. */
  constructor(db: Db, options: { scope: string; windowMs: number }) {
    this.#db = db;
    this.#scope = options.scope;
    this.windowMs = options.windowMs;
  }

  #stored(keys: readonly string[]): string[] {
    return [...new Set(keys)].map((key) => `${this.#scope}:${key}`);
  }

  async count(keys: readonly string[], now: number): Promise<AttemptCount[]> {
    if (keys.length === 0) return [];
    if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = now;
      await this.#db.query('DELETE FROM attempt_counts WHERE window_end <= $1', [now]);
    }
    const stored = this.#stored(keys);
    // $1 now, $2 the end of a window opened now, $3… the keys. In SET, attempt_counts.* is the stored row.
    const rows = await this.#db.query<{ key: string; attempts: number; window_end: number }>(
      `INSERT INTO attempt_counts (key, attempts, window_end)
       VALUES ${stored.map((_, i) => `($${i + 3}, 1, $2)`).join(', ')}
       ON CONFLICT (key) DO UPDATE SET
         attempts = CASE WHEN attempt_counts.window_end > $1 THEN attempt_counts.attempts + 1 ELSE 1 END,
         window_end = CASE WHEN attempt_counts.window_end > $1 THEN attempt_counts.window_end ELSE $2 END
       RETURNING key, attempts, window_end`,
      [now, now + this.windowMs, ...stored],
    );
    const byKey = new Map(rows.map((row) => [row.key, row]));
    return keys.map((key) => {
      const row = byKey.get(`${this.#scope}:${key}`);
      if (!row) throw new Error(`attempt_counts returned no row for ${key}`);
      return { key, attempts: Number(row.attempts), windowEnd: Number(row.window_end) };
    });
  }

  async uncount(keys: readonly string[], now: number): Promise<void> {
    if (keys.length === 0) return;
    const stored = this.#stored(keys);
    await this.#db.query(
      `UPDATE attempt_counts SET attempts = attempts - 1
       WHERE key IN (${placeholderList(stored.length, 2)}) AND window_end > $1 AND attempts > 0`,
      [now, ...stored],
    );
  }

  async clear(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const stored = this.#stored(keys);
    await this.#db.query(`DELETE FROM attempt_counts WHERE key IN (${placeholderList(stored.length)})`, stored);
  }
}
