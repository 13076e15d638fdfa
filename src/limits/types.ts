export type WindowName = 'minute' | 'day' | 'month';
export const WINDOW_NAMES: readonly WindowName[] = ['minute', 'day', 'month'];

export interface Limits {
  rpm: number;
  rpd: number;
  monthly: number;
}

/** What the store saw before this request: the counts in each window. */
export interface AdmissionCounts {
  admitted: boolean;
  minuteCount: number;
  /** Time of the oldest request still inside the sliding minute, or null when there is none. */
  minuteOldest: number | null;
  dayCount: number;
  monthCount: number;
}

/**
 * The storage port of the rate limiter. `admit` must be atomic per account across every process
 * sharing the store: N concurrent calls against R remaining admit exactly R.
 */
export interface RateLimitStore {
  /** Counts a request when every window has room, and reports the counts. */
  admit(accountId: string, limits: Limits, now: number): Promise<AdmissionCounts>;
  /** Reports the counts without counting anything (GET /z1/usage). */
  peek(accountId: string, limits: Limits, now: number): Promise<AdmissionCounts>;
  /** Writes what is pending; the store is not used afterwards. */
  close(): Promise<void>;
}

export interface WindowState {
  limit: number;
  remaining: number;
  /** Unix seconds when the window frees up. */
  reset: number;
}

export interface RateLimitDecision {
  admitted: boolean;
  windows: Record<WindowName, WindowState>;
  /** The window with the fewest requests remaining: the one the X-RateLimit-* headers describe. */
  tightest: WindowName;
  /** When rejected: the exhausted window that frees up last (Retry-After waits for it). */
  exceeded?: WindowName;
}
