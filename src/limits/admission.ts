import type { Clock } from '../clock/index.js';
import type { AppError } from '../errors/index.js';
import type { Account, Principal } from '../kernel/index.js';
import type { AuthFailureLimiter } from './auth-failure-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { rateLimitHeaders, rateLimitRefusal, refusalError } from './refusal.js';
import type { Limits, RateLimitDecision } from './types.js';

export interface ApiAdmissionDeps {
  limiter: RateLimiter;
  /** The account's limits (its tier's). */
  limits(account: Account): Limits;
  authFailures: AuthFailureLimiter;
  clock: Clock;
  /** Told of each request the rate limiter refuses (the metrics count them). */
  rateLimited?(): void;
  /** A failure that does not fail the request (a failed authentication that could not be counted). */
  warn(err: unknown, message: string): void;
}

/** What an authenticated request's admission answers: the headers every answer carries, and a refusal. */
export interface AdmissionAnswer {
  headers: Record<string, string>;
  refusal?: AppError;
}

/**
 * The API's admission, as the HTTP layer asks for it (HttpPorts.admit, HttpPorts.authenticationFailed):
 * the decision, the answer ready to write (the X-RateLimit-* headers on every authenticated answer; the
 * refusal with its Retry-After) and the count of refusals, so the HTTP layer computes none of it.
 */
export class ApiAdmission {
  readonly #deps: ApiAdmissionDeps;

  constructor(deps: ApiAdmissionDeps) {
    this.#deps = deps;
  }

  /** Counts an authenticated request against its account's windows (a refused one is not counted). */
  async admit(principal: Principal): Promise<AdmissionAnswer> {
    const { account } = principal;
    const decision = await this.#deps.limiter.admit(account.id, this.#deps.limits(account));
    const headers = rateLimitHeaders(decision);
    if (decision.admitted) return { headers };
    this.#deps.rateLimited?.();
    return { headers, refusal: refusalError(rateLimitRefusal(decision, this.#deps.clock())) };
  }

  /** The account's windows as they stand, without counting a request (GET /z1/usage, the dashboard). */
  windows(account: Account): Promise<RateLimitDecision> {
    return this.#deps.limiter.peek(account.id, this.#deps.limits(account));
  }

  /**
   * Counts a failed authentication from `address`: the refusal (429) once the address has failed too
   * often, else null (the request gets its 401). Should the count fail (the database away), the request
   * still gets its 401 rather than a 500.
   */
  async authenticationFailed(address: string): Promise<AppError | null> {
    try {
      const refusal = await this.#deps.authFailures.recordFailure(address);
      return refusal ? refusalError(refusal) : null;
    } catch (err) {
      this.#deps.warn(err, 'counting a failed authentication failed');
      return null;
    }
  }
}
