import type { Clock } from '../clock/index.js';
import type { AppError } from '../errors/index.js';
import type { Account, KeyRateLimits, Principal } from '../kernel/index.js';
import type { AuthFailureLimiter } from './auth-failure-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { rateLimitHeaders, rateLimitRefusal, refusalError } from './refusal.js';
import type { Limits, RateLimitDecision } from './types.js';

/** What a window of a key without its own limit holds: more than a day or month can bring (pvai_admit's INTEGER). */
const UNLIMITED = 2_147_483_647;

/** A key's own windows, or undefined when it has no limits of its own (only its account's are counted). */
function keyLimits(rateLimits: KeyRateLimits | null | undefined): Limits | undefined {
  if (!rateLimits || (rateLimits.rpm === null && rateLimits.rpd === null)) return undefined;
  return { rpm: rateLimits.rpm ?? UNLIMITED, rpd: rateLimits.rpd ?? UNLIMITED, monthly: UNLIMITED };
}

const remaining = (decision: RateLimitDecision) => decision.windows[decision.tightest].remaining;

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

  /**
   * Counts an authenticated request against its key's own windows (when it has rate limits), then its account's; a
   * refused one is not counted by the limit that refused it (one the account refuses stays counted by its key, the
   * stricter side). The headers describe the limit closest to biting; a refusal's, the limit that bit.
   */
  async admit(principal: Principal): Promise<AdmissionAnswer> {
    const { account, key } = principal;
    const own = keyLimits(key.rateLimits);
    const keyDecision = own ? await this.#deps.limiter.admit(key.id, own) : undefined;
    if (keyDecision && !keyDecision.admitted) return this.#refuse(keyDecision, key);
    const decision = await this.#deps.limiter.admit(account.id, this.#deps.limits(account));
    if (!decision.admitted) return this.#refuse(decision);
    const closest = keyDecision && remaining(keyDecision) < remaining(decision) ? keyDecision : decision;
    return { headers: rateLimitHeaders(closest) };
  }

  #refuse(decision: RateLimitDecision, key?: Principal['key']): AdmissionAnswer {
    this.#deps.rateLimited?.();
    const refusal = rateLimitRefusal(decision, this.#deps.clock(), key && (key.name ?? key.id));
    return { headers: rateLimitHeaders(decision), refusal: refusalError(refusal) };
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
