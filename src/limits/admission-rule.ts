import type { AdmissionCounts, Limits, WindowName } from './types.js';
import { MINUTE_MS } from './windows.js';

/**
 * The rate-limit admission rule, the one TypeScript home of it: the in-process store decides with it, the
 * rate limiter names the full windows with it. PostgreSQL's `pvai_admit` (the initial migration, which stays
 * as applied) states the same rule in SQL; test/limits/admission-rule-parity.test.ts runs both on one table
 * of cases, so a change here that the SQL does not share fails there.
 *
 * A request costs 1 in every window; a refused one is not counted.
 */

/** What each window holds before the request: the stores count, the rule decides. */
export type WindowCounts = Pick<AdmissionCounts, 'minuteCount' | 'dayCount' | 'monthCount'>;

/**
 * The latest time that has left the sliding minute at `now`: a request at `t` counts while `t > now - 60 s`,
 * so one exactly 60 s old no longer does. A time after `now` (a clock that moved back) still counts.
 */
export function minuteCutoff(now: number): number {
  return now - MINUTE_MS;
}

/** A window is full once it holds as many requests as its limit. */
function isFull(count: number, limit: number): boolean {
  return count >= limit;
}

/** Admitted when no window is full. Called on every request behind a key: no allocation. */
export function admits(counts: WindowCounts, limits: Limits): boolean {
  return (
    !isFull(counts.minuteCount, limits.rpm) &&
    !isFull(counts.dayCount, limits.rpd) &&
    !isFull(counts.monthCount, limits.monthly)
  );
}

/** The windows that refuse the request (none when it is admitted), in WINDOW_NAMES order. */
export function fullWindows(counts: WindowCounts, limits: Limits): WindowName[] {
  const full: WindowName[] = [];
  if (isFull(counts.minuteCount, limits.rpm)) full.push('minute');
  if (isFull(counts.dayCount, limits.rpd)) full.push('day');
  if (isFull(counts.monthCount, limits.monthly)) full.push('month');
  return full;
}
