/**
 * Validation and normalisation shared by the adapters, so both reject the
 * same inputs, store bodies in the same form (a JSON string) and agree on
 * expiry to the millisecond. Times are whole epoch milliseconds because the
 * PostgreSQL columns are bigint.
 */

export function assertValidTtl(ttlMs: number): void {
  if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
    throw new RangeError(`Response cache TTL must be a positive number of milliseconds, got ${ttlMs}`);
  }
}

/** createdAt as stored: whole milliseconds. */
export function normaliseCreatedAt(createdAt: number): number {
  if (!Number.isFinite(createdAt)) {
    throw new RangeError(`Response cache createdAt must be a finite epoch-millisecond time, got ${createdAt}`);
  }
  return Math.floor(createdAt);
}

/** The clock reading, in whole milliseconds. */
export function wholeMs(time: number): number {
  return Math.floor(time);
}

/**
 * When an entry set at `nowMs` stops being served. An entry is alive while
 * now < expiresAt (both adapters use this boundary).
 */
export function expiresAtFor(nowMs: number, ttlMs: number): number {
  return wholeMs(nowMs) + Math.ceil(ttlMs);
}

/**
 * Serializing at `set` time is what makes entries immutable from the caller's
 * view: the cache keeps text, and every `get` parses a fresh object.
 */
export function serializeBody(body: unknown): string {
  const json: unknown = JSON.stringify(body);
  // JSON.stringify returns undefined (not a string) for undefined, functions
  // and symbols; storing that would silently lose the answer.
  if (typeof json !== 'string') {
    throw new TypeError('Response cache body must be JSON-serializable');
  }
  return json;
}
