import type { Clock } from '../clock/index.js';
import { addressBucket } from '../kernel/index.js';
import type { AttemptCounter } from './attempt-counter.js';
import { authFailureRefusal, type Refusal } from './refusal.js';

/**
 * Failed API-key (and admin-token) authentications per client address (an IPv6 address by its /64), so
 * key guessing gets 429 instead of endless 401s: past `limitPerMinute` failures in a minute-long window
 * opened by the address's first failure, each further failure is answered 429 with the wait until the
 * window ends. Shared by replicas on PostgreSQL (SqlAttemptCounter: one upsert per failure, the only
 * write, and only for requests that failed); in memory on the embedded server, which owns its database.
 */
export class AuthFailureLimiter {
  readonly #counter: AttemptCounter;
  readonly #limit: number;
  readonly #clock: Clock;

  constructor(counter: AttemptCounter, limitPerMinute: number, clock: Clock) {
    this.#counter = counter;
    this.#limit = limitPerMinute;
    this.#clock = clock;
  }

  /** Records a failure; the refusal (429) when the address is over its limit, else null (the 401 stands). */
  async recordFailure(address: string): Promise<Refusal | null> {
    const now = this.#clock();
    const [count] = await this.#counter.count([addressBucket(address)], now);
    if (!count || count.attempts <= this.#limit) return null;
    return authFailureRefusal(count.windowEnd, now);
  }
}
