import type { AttemptCount, AttemptCounter } from '../attempt-counter.js';

/** Bound on tracked keys, so a flood from many addresses cannot grow memory without end. */
const MAX_TRACKED = 100_000;

/**
 * Attempts in this process's memory: exact where one process owns the database (the embedded SQLite
 * server), and no write for any attempt. A restart forgets the counts, at most one window's worth.
 */
export class InProcessAttemptCounter implements AttemptCounter {
  readonly windowMs: number;
  /** In the order windows opened: the first entries are the first to have expired. */
  readonly #windows = new Map<string, { attempts: number; windowEnd: number }>();

  constructor(options: { windowMs: number }) {
    this.windowMs = options.windowMs;
  }

  async count(keys: readonly string[], now: number): Promise<AttemptCount[]> {
    return keys.map((key) => {
      let window = this.#windows.get(key);
      if (!window || window.windowEnd <= now) {
        this.#windows.delete(key);
        window = { attempts: 0, windowEnd: now + this.windowMs };
        this.#windows.set(key, window);
        if (this.#windows.size > MAX_TRACKED) {
          const oldest = this.#windows.keys().next().value;
          if (oldest !== undefined) this.#windows.delete(oldest);
        }
      }
      window.attempts += 1;
      return { key, attempts: window.attempts, windowEnd: window.windowEnd };
    });
  }

  async uncount(keys: readonly string[], now: number): Promise<void> {
    for (const key of keys) {
      const window = this.#windows.get(key);
      if (window && window.windowEnd > now && window.attempts > 0) window.attempts -= 1;
    }
  }

  async clear(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.#windows.delete(key);
  }
}
