import { AppError, statusOf } from '../errors/index.js';
import type { RateLimitDecision } from './types.js';

/**
 * A request refused admission, as every refusing path answers it: 429 `RATE_LIMIT_EXCEEDED` with a
 * `Retry-After` of whole seconds (at least 1), and for an account's windows the `X-RateLimit-*` headers.
 * This file is the one place 429s are made: the rate limiter (API requests), the failed-authentication
 * limiter (API keys and the admin token) and the sign-in throttle (the dashboard) each describe their
 * refusal here; the HTTP layer and the dashboard write what it holds and compute nothing of it.
 */
export interface Refusal {
  readonly status: number;
  readonly code: 'RATE_LIMIT_EXCEEDED';
  /** For people: the API's error message, the dashboard's sign-in page. */
  readonly message: string;
  /** The error body's `details`: which window refused, and its numbers. */
  readonly details: Readonly<Record<string, unknown>>;
  /** `Retry-After`, and the `X-RateLimit-*` headers when an account's windows refused. */
  readonly headers: Readonly<Record<string, string>>;
  readonly retryAfterSeconds: number;
}

const CODE = 'RATE_LIMIT_EXCEEDED';

function refusal(
  message: string,
  details: Record<string, unknown>,
  retryAfterSeconds: number,
  headers: Record<string, string> = {},
): Refusal {
  return {
    status: statusOf(CODE),
    code: CODE,
    message,
    details,
    headers: { ...headers, 'Retry-After': String(retryAfterSeconds) },
    retryAfterSeconds,
  };
}

/** Whole seconds from `now` until `until` (both in ms), at least 1. */
function secondsUntil(until: number, now: number): number {
  return Math.max(1, Math.ceil((until - now) / 1000));
}

/** The X-RateLimit-* headers of a decision: every authenticated answer carries them, admitted or not. */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const w = decision.windows[decision.tightest];
  return {
    'X-RateLimit-Limit': String(w.limit),
    'X-RateLimit-Remaining': String(w.remaining),
    'X-RateLimit-Reset': String(w.reset),
  };
}

/**
 * An account (or, named by `key`, one of its keys) over one of its windows: Retry-After waits for the full window
 * that frees up last.
 */
export function rateLimitRefusal(decision: RateLimitDecision, now: number, key?: string): Refusal {
  const window = decision.exceeded ?? decision.tightest;
  const state = decision.windows[window];
  // The reset is in whole Unix seconds (the X-RateLimit-Reset header), so the wait is counted from the
  // current whole second: the header and Retry-After agree.
  const retryAfter = Math.max(1, state.reset - Math.floor(now / 1000));
  const whose = key === undefined ? '' : ` of the key ${key}`;
  return refusal(
    `Rate limit exceeded: ${state.limit} requests per ${window}${whose}`,
    key === undefined
      ? { window, limit: state.limit, reset: state.reset }
      : { window, limit: state.limit, reset: state.reset, scope: 'key' },
    retryAfter,
    rateLimitHeaders(decision),
  );
}

/** An address past its failed authentications, until the window its first failure opened ends. */
export function authFailureRefusal(windowEnd: number, now: number): Refusal {
  const retryAfter = secondsUntil(windowEnd, now);
  return refusal(
    'Too many failed authentication attempts from this address',
    { window: 'auth_failures', retry_after: retryAfter },
    retryAfter,
  );
}

/** A sign-in over its limits, until the later of the windows that refused it ends. */
export function signInRefusal(windowEnd: number, now: number): Refusal {
  const retryAfter = secondsUntil(windowEnd, now);
  const minutes = Math.ceil((windowEnd - now) / 60_000);
  return refusal(
    `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
    { window: 'sign_in', retry_after: retryAfter },
    retryAfter,
  );
}

/** A refusal as the API answers it: thrown, and written with its headers by the HTTP layer's error mapping. */
export function refusalError(refusal: Refusal): AppError {
  return new AppError(refusal.code, refusal.message, { ...refusal.details }, { ...refusal.headers });
}
