import { abortReason, ProviderError } from '../types.js';

export interface RetryPolicy {
  /** Extra attempts after the first. */
  maxRetries: number;
  /** First backoff step; doubles per attempt, plus up to the same again in random jitter. */
  baseDelayMs: number;
  /** Longest backoff between attempts. */
  maxDelayMs: number;
  /**
   * Longest Retry-After we are willing to wait. A longer one ends the retries at once: the error
   * (retryable, with `retryAfterMs`) lets the router move to the next target instead of stalling.
   */
  maxRetryAfterMs: number;
}

/**
 * Delay before retry number `attempt` (0-based), or undefined when `error` must not be retried here.
 * Retried: 429, 5xx and connection failures. Not retried: other 4xx, and timeouts (a second wait of
 * the same length rarely helps; the router falls back to the next target instead).
 */
export function retryDelayFor(error: ProviderError, attempt: number, policy: RetryPolicy): number | undefined {
  if (attempt >= policy.maxRetries || error.kind !== 'upstream' || !error.retryable) return undefined;
  if (error.retryAfterMs !== undefined) {
    return error.retryAfterMs <= policy.maxRetryAfterMs ? error.retryAfterMs : undefined;
  }
  const exponential = policy.baseDelayMs * 2 ** attempt;
  return Math.min(policy.maxDelayMs, exponential + Math.random() * policy.baseDelayMs);
}

/** Retry-After as milliseconds: either delta-seconds or an HTTP date. */
export function parseRetryAfter(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Waits `ms`, or rejects with the abort reason as soon as `signal` fires. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** The first `code` found on an error, its causes, or (AggregateError) its members. */
function errorCode(err: unknown, depth = 0): string | undefined {
  if (typeof err !== 'object' || err === null || depth > 4) return undefined;
  if ('code' in err && typeof err.code === 'string') return err.code;
  if (err instanceof AggregateError) {
    for (const inner of err.errors) {
      const code = errorCode(inner, depth + 1);
      if (code) return code;
    }
  }
  return 'cause' in err ? errorCode(err.cause, depth + 1) : undefined;
}

/**
 * A transport-level failure (no usable HTTP status) as a ProviderError. Its message (the server's log) names
 * the upstream and the system's words, which carry its address; its public message says what happened only.
 */
export function transportError(err: unknown, upstream: string): ProviderError {
  if (err instanceof ProviderError) return err;
  const code = errorCode(err);
  const detail = err instanceof Error ? err.message : String(err);
  if (code && TIMEOUT_CODES.has(code)) {
    return new ProviderError('timeout', `${upstream} timed out (${code})`, {
      cause: err,
      publicMessage: 'the upstream did not answer in time',
    });
  }
  if (code && CONNECTION_CODES.has(code)) {
    return new ProviderError('upstream', `${upstream} connection failed (${code}): ${detail}`, {
      cause: err,
      retryable: true,
      publicMessage: 'the connection to the upstream failed',
    });
  }
  return new ProviderError('upstream', `${upstream} request failed: ${detail}`, {
    cause: err,
    retryable: false,
    publicMessage: 'the request to the upstream failed',
  });
}

/** An upstream error body's `param` and `code` (OpenAI's `{"error": {...}}`), which say what to fix in a request. */
export interface UpstreamErrorFields {
  param?: string;
  code?: string;
}

/** A short token of names and indexes (`messages[0].content`, `context_length_exceeded`), nothing else. */
const HINT = /^[A-Za-z0-9_.[\]-]{1,64}$/;

/**
 * The fields a tenant may read: only short tokens that contain none of `secrets` (the upstream's host and
 * model name), so that an upstream cannot pass its address or model on through them.
 */
export function tenantHints(fields: UpstreamErrorFields, secrets: readonly string[]): string {
  const safe = (value: string | undefined) =>
    value !== undefined &&
    HINT.test(value) &&
    !secrets.some((secret) => secret !== '' && value.toLowerCase().includes(secret.toLowerCase()));
  const hints = [
    ...(safe(fields.param) ? [`param: ${fields.param}`] : []),
    ...(safe(fields.code) ? [`code: ${fields.code}`] : []),
  ];
  return hints.length > 0 ? `; ${hints.join('; ')}` : '';
}

/**
 * A non-2xx answer as a ProviderError: the upstream's own words in its message (the server's log); in its public
 * message a fixed sentence and the status, and for a request refused as invalid, `hints` (tenantHints).
 */
export function statusError(
  status: number,
  retryAfter: string | string[] | undefined,
  message: string,
  upstream: string,
  hints = '',
): ProviderError {
  const text = `${upstream} answered HTTP ${status}${message ? `: ${message}` : ''}`;
  if (status === 429 || status >= 500) {
    const retryAfterMs = parseRetryAfter(retryAfter);
    return new ProviderError('upstream', text, {
      status,
      retryable: true,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      publicMessage: `the upstream ${status === 429 ? 'is rate limiting' : 'failed'} (HTTP ${status})`,
    });
  }
  if (status === 408) {
    return new ProviderError('timeout', text, { status, publicMessage: `the upstream timed out (HTTP ${status})` });
  }
  if (status === 400 || status === 422) {
    return new ProviderError('bad-request', text, {
      status,
      publicMessage: `the upstream refused the request as invalid (HTTP ${status}${hints})`,
    });
  }
  // 401/403/404…: our configuration is wrong for this target; the request itself may be fine elsewhere.
  return new ProviderError('upstream', text, {
    status,
    retryable: false,
    publicMessage: `the upstream refused the request (HTTP ${status})`,
  });
}
