import type { CacheStatus } from '../chat/index.js';
import type { AppError } from '../errors/index.js';
import type { Totals } from './body.js';
import type { ResponseBody, StoredResponse } from './types.js';

/** What a response cost, for its headers and usage row. */
export interface Accounting {
  credits: number;
  cache: CacheStatus;
  totals: Totals;
}

/**
 * The reason a response's signal is aborted with when it is cancelled (`POST …/cancel`): it then ends
 * `cancelled`, keeping what it made, instead of ending as a client that left.
 */
export class ResponseCancelledError extends Error {
  constructor() {
    super('response cancelled');
    this.name = 'ResponseCancelledError';
  }
}

/** How a run ended. `record` is the response as stored (or as it would be, for `store: false`). */
export interface RunOutcome {
  body?: ResponseBody;
  record?: StoredResponse;
  failed?: AppError;
  cause?: unknown;
  clientClosed?: true;
  cancelled?: true;
}

export interface RunOptions {
  /** The number of the run's first event (a background response's events continue its `response.queued`). */
  firstSequence?: number;
}

/** Whether a response's signal was aborted by a cancel (not by its reader leaving). */
export const cancelledBy = (signal: AbortSignal): boolean =>
  signal.aborted && signal.reason instanceof ResponseCancelledError;
