export const MINUTE_MS = 60_000;

const DAY_MS = 86_400_000;

/** A UTC day is 86,400,000 ms of JavaScript time (no leap seconds): no Date is needed per admission. */
export function utcDayStart(now: number): number {
  return now - (((now % DAY_MS) + DAY_MS) % DAY_MS);
}

export function nextUtcDayStart(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
}

/** The last month asked for: every admission asks, and nearly all fall in the same month. */
let month = { start: 0, end: 0 };

export function utcMonthStart(now: number): number {
  if (now >= month.start && now < month.end) return month.start;
  const d = new Date(now);
  month = {
    start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
    end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
  };
  return month.start;
}

export function nextUtcMonthStart(now: number): number {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}
