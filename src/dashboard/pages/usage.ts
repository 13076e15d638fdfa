import { AppError } from '../../errors/index.js';
import { type DashboardRouter, signedIn } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { type Breakdown, PRESET_DAYS, usagePage } from '../usage-page.js';
import { downloadText, send } from '../web.js';

const DEFAULT_DAYS = 30;
/** The longest range a page shows (a bar a day): a year. */
const MAX_DAYS = 366;
const DAY_MS = 86_400_000;
/** What a CSV link may split the range by (the API's `group_by`). */
const GROUPS = ['day', 'model', 'key', 'user'] as const;
/** Groups per breakdown table; the CSV has every one. */
const BREAKDOWN_ROWS = 50;

/** A `YYYY-MM-DD` of the form, as the UTC midnight it names; anything else is the page's 400 naming the field. */
function dayOf(value: unknown, field: 'start' | 'end'): number {
  const text = typeof value === 'string' ? value : '';
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : Number.NaN;
  if (!Number.isFinite(ms) || new Date(ms).toISOString().slice(0, 10) !== text) {
    throw new AppError('INVALID_PARAMETER', `The ${field} date must be a day as YYYY-MM-DD`, { field });
  }
  return ms;
}

/**
 * The range a Usage request asks for, as UTC days (both included): `start` and `end` from the form, or the
 * last `days` (a preset), or the last 30 days. Refused (a page saying why): an unreadable date, an end before
 * the start, more than a year.
 */
function rangeOf(query: Record<string, unknown>, now: number): { first: number; last: number; preset?: number } {
  const today = now - (now % DAY_MS);
  if (query.start !== undefined || query.end !== undefined) {
    const first = dayOf(query.start, 'start');
    const last = dayOf(query.end, 'end');
    if (last < first)
      throw new AppError('INVALID_PARAMETER', 'The end date is before the start date', { field: 'end' });
    if ((last - first) / DAY_MS + 1 > MAX_DAYS) {
      throw new AppError('INVALID_PARAMETER', `A range is at most ${MAX_DAYS} days`, { field: 'start' });
    }
    return { first, last };
  }
  const preset = PRESET_DAYS.find((n) => String(n) === query.days) ?? DEFAULT_DAYS;
  return { first: today - (preset - 1) * DAY_MS, last: today, preset };
}

/**
 * Usage over a range of UTC days (a GET form with presets): the daily rollup charted per model, the range by
 * model, key and end user, each downloadable as the API's CSV; the rate-limit windows and the balance.
 */
export function usageRoutes(
  router: DashboardRouter,
  deps: Pick<DashboardDeps, 'clock' | 'usage' | 'rateLimits' | 'accounts'>,
): void {
  router.get('/usage', async (ctx) => {
    const signed = signedIn(ctx);
    const { first, last, preset } = rangeOf(ctx.query, deps.clock());
    const period = { start: first, end: last + DAY_MS };
    const accountId = signed.account.id;
    await deps.usage.flush();
    const breakdown = async (groupBy: Breakdown['groupBy']): Promise<Breakdown> => {
      const { items, page } = await deps.usage.breakdowns.page(accountId, period, groupBy, { limit: BREAKDOWN_ROWS });
      return { groupBy, items, hasMore: page.hasMore };
    };
    const [rows, limits, account, ...breakdowns] = await Promise.all([
      deps.usage.days(accountId, period.start, period.end),
      deps.rateLimits(signed.account),
      deps.accounts.requireAccount(accountId),
      breakdown('model'),
      breakdown('key'),
      breakdown('user'),
    ]);
    const days = Array.from({ length: (last - first) / DAY_MS + 1 }, (_, i) =>
      new Date(first + i * DAY_MS).toISOString().slice(0, 10),
    );
    const page = { session: signed.page, balance: account.credits, windows: limits.windows, days, preset, rows };
    send(ctx, 200, usagePage({ ...page, breakdowns }));
  });

  /** The API's CSV (`GET /z1/usage?format=csv`) of the range, by day, model, key or end user. */
  router.get('/usage.csv', async (ctx) => {
    const signed = signedIn(ctx);
    const groupBy = GROUPS.find((g) => g === ctx.query.group_by);
    if (!groupBy) throw new AppError('INVALID_PARAMETER', 'group_by must be day, model, key or user');
    const { first, last } = rangeOf(ctx.query, deps.clock());
    const period = { start: first, end: last + DAY_MS };
    const csv = await deps.usage.breakdowns.csv(signed.account.id, period, groupBy);
    downloadText(ctx, csv.filename, 'text/csv; charset=utf-8', csv.body);
  });
}
