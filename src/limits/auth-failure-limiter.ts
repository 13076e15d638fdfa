import type { Clock } from '../clock/index.js';
import { MINUTE_MS } from './windows.js';

/** Bound on tracked addresses, so a flood from many addresses cannot grow memory without end. */
const MAX_TRACKED = 100_000;

/**
 * Failed authentications per client address over a sliding minute, in this process.
 * Key guessing then gets 429 instead of endless 401s. Per replica on purpose: it guards the
 * process, and a shared store would put a database write on every bad request.
 */
export class AuthFailureLimiter {
  readonly #limit: number;
  readonly #clock: Clock;
  readonly #failures = new Map<string, number[]>();

  constructor(limitPerMinute: number, clock: Clock) {
    this.#limit = limitPerMinute;
    this.#clock = clock;
  }

  /** Records a failure; returns seconds to wait when the address is over its limit, else null. */
  recordFailure(address: string): number | null {
    const now = this.#clock();
    const recent = (this.#failures.get(address) ?? []).filter((t) => t > now - MINUTE_MS);
    if (recent.length >= this.#limit) {
      this.#failures.set(address, recent);
      const oldest = recent[0] ?? now;
      return Math.max(1, Math.ceil((oldest + MINUTE_MS - now) / 1000));
    }
    recent.push(now);
    this.#failures.delete(address);
    this.#failures.set(address, recent);
    if (this.#failures.size > MAX_TRACKED) {
      const first = this.#failures.keys().next().value;
      if (first !== undefined) this.#failures.delete(first);
    }
    return null;
  }
}
