import type { Clock } from '../clock/index.js';
import { fullWindows } from './admission-rule.js';
import type { AdmissionCounts, Limits, RateLimitDecision, RateLimitStore, WindowName, WindowState } from './types.js';
import { WINDOW_NAMES } from './types.js';
import { MINUTE_MS, nextUtcDayStart, nextUtcMonthStart } from './windows.js';

const toSeconds = (ms: number) => Math.ceil(ms / 1000);

/**
 * Per-account limits over a sliding minute, the UTC day and the UTC calendar month.
 * A rejected request is not counted.
 */
export class RateLimiter {
  readonly #store: RateLimitStore;
  readonly #clock: Clock;

  constructor(store: RateLimitStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  /**
   * Counts this request if every window has room; otherwise reports which one is full. A reaction on the
   * store's promise rather than an async frame awaiting it: this runs on every request behind a key.
   */
  admit(accountId: string, limits: Limits): Promise<RateLimitDecision> {
    const now = this.#clock();
    return this.#store.admit(accountId, limits, now).then((counts) => decide(counts, limits, now));
  }

  /** Writes what the store has pending (the embedded store's prunings and failed writes). */
  close(): Promise<void> {
    return this.#store.close();
  }

  /** The windows as they stand, without counting a request. */
  async peek(accountId: string, limits: Limits): Promise<RateLimitDecision> {
    const now = this.#clock();
    const counts = await this.#store.peek(accountId, limits, now);
    return decide({ ...counts, admitted: false }, limits, now, false);
  }
}

function decide(counts: AdmissionCounts, limits: Limits, now: number, counted = counts.admitted): RateLimitDecision {
  const used = counted ? 1 : 0;
  // The sliding minute frees a slot when its oldest request turns 60 s old; with this request
  // counted and nothing older, that is this request.
  const oldest = counts.minuteOldest ?? (counted ? now : null);
  const minuteReset = oldest === null ? now : oldest + MINUTE_MS;
  const windows: Record<WindowName, WindowState> = {
    minute: {
      limit: limits.rpm,
      remaining: Math.max(0, limits.rpm - counts.minuteCount - used),
      reset: toSeconds(minuteReset),
    },
    day: {
      limit: limits.rpd,
      remaining: Math.max(0, limits.rpd - counts.dayCount - used),
      reset: toSeconds(nextUtcDayStart(now)),
    },
    month: {
      limit: limits.monthly,
      remaining: Math.max(0, limits.monthly - counts.monthCount - used),
      reset: toSeconds(nextUtcMonthStart(now)),
    },
  };
  let tightest: WindowName = 'minute';
  for (const name of WINDOW_NAMES) if (windows[name].remaining < windows[tightest].remaining) tightest = name;
  const decision: RateLimitDecision = { admitted: counts.admitted, windows, tightest };
  if (!counts.admitted) {
    let exceeded: WindowName | undefined;
    for (const name of fullWindows(counts, limits))
      if (!exceeded || windows[name].reset > windows[exceeded].reset) exceeded = name;
    if (exceeded) {
      decision.exceeded = exceeded;
      decision.tightest = exceeded;
    }
  }
  return decision;
}
