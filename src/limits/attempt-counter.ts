/** One key's attempts in its current window. */
export interface AttemptCount {
  key: string;
  /** Attempts counted in the key's current window, the one just counted included. */
  attempts: number;
  /** When that window ends (ms since the epoch); the count starts again from the next attempt. */
  windowEnd: number;
}

/**
 * The storage port behind the throttles of failed credentials (API keys, dashboard sign-in): attempts
 * counted per key in a window of fixed length that the key's first attempt opens. Counting is atomic per
 * key across every process sharing the store, so N concurrent attempts against R remaining see exactly R
 * counts within the limit. An adapter has one scope and one window length; keys of different scopes never
 * meet.
 *
 * Why windows opened by the first attempt rather than a sliding log: a key is then one row (or one map
 * entry) and an attempt one upsert. The price is that a client can spend one window's allowance at its
 * end and the next one's at once after it; what guessing needs bounded is attempts per hour, and that
 * holds (at most the limit per window, on average).
 */
export interface AttemptCounter {
  readonly windowMs: number;
  /** Counts one attempt under each key (one statement on SQL stores); the counts, in the keys' order. */
  count(keys: readonly string[], now: number): Promise<AttemptCount[]>;
  /** Takes back one attempt counted under each key in its current window (the attempt succeeded). */
  uncount(keys: readonly string[], now: number): Promise<void>;
  /** Forgets the keys' attempts. */
  clear(keys: readonly string[]): Promise<void>;
}
