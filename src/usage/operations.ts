import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import { type Operations, requirePrincipal } from '../http/index.js';
import type { Account } from '../kernel/index.js';
import type { RateLimitDecision } from '../limits/index.js';
import { utcMonthStart } from '../limits/index.js';
import { totalsBody, type UsageBreakdowns } from './breakdown.js';
import type { UsageStore, UsageTotals } from './types.js';

/** Series items per page when `limit` is not given (the contract's default). */
const DEFAULT_PAGE = 100;

export interface UsageDeps {
  clock: Clock;
  usage: Pick<UsageStore, 'totals'>;
  /** The series by day, model, key or end user, and its CSV. */
  breakdowns: UsageBreakdowns;
  /** The account's current balance (fresher than the principal's copy). */
  balance(accountId: string): Promise<number | undefined>;
  /** The account's rate-limit windows, without counting a request. */
  rateLimits(account: Account): Promise<RateLimitDecision>;
}

/** The first and last instants a period may have: RFC 3339's years, 0001 to 9999 (UTC). */
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * An RFC 3339 date (midnight UTC) or date-time, as the contract's Instant schema admits (already
 * checked there: years 0001 to 9999, offsets within ±14:00). A leap second (":60") counts as the second
 * before it. An offset can carry an instant just past those years (`0001-01-01T00:00:00+01:00`); it is
 * clamped to them, so the period written back is always a valid date-time. A value that still does not
 * parse is refused with 400 naming the parameter, never replaced by the default.
 */
function parseInstant(value: unknown, field: 'start' | 'end'): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value).replace(/:60(?=(\.\d+)?(Z|[+-]\d{2}:?\d{2})$)/i, ':59');
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : Date.parse(text);
  if (!Number.isFinite(ms)) {
    throw new AppError('INVALID_PARAMETER', `${field} is not a date or date-time this server can read`, {
      field,
      reason: 'must be an RFC 3339 date or date-time, years 0001 to 9999, offset within ±14:00',
    });
  }
  return Math.min(LAST_INSTANT, Math.max(FIRST_INSTANT, ms));
}

function sumOf(series: readonly UsageTotals[]): UsageTotals {
  const sum: UsageTotals = { requests: 0, credits: 0, promptTokens: 0, completionTokens: 0 };
  for (const s of series) {
    sum.requests += s.requests;
    sum.credits += s.credits;
    sum.promptTokens += s.promptTokens;
    sum.completionTokens += s.completionTokens;
  }
  return sum;
}

/** GET /z1/usage: the account's totals over a period, its balance, its rate-limit windows, a page of a series. */
export function usageOperations(deps: UsageDeps): Operations<'getUsage'> {
  return {
    getUsage: async ({ query }, call) => {
      const { account, key } = requirePrincipal(call);
      const now = deps.clock();
      const start = parseInstant(query.start, 'start') ?? utcMonthStart(now);
      // An end before the start is an empty period: no rows, zero totals.
      const end = Math.max(start, parseInstant(query.end, 'end') ?? now + 1);
      const csv = query.format === 'csv';
      // A CSV is one row per group: asked for without a grouping, its rows are the days.
      const groupBy = query.group_by ?? (csv ? 'day' : undefined);
      // A key bound to an end user sees that end user's group alone: the others' ids are not theirs to see.
      const onlyUser = groupBy === 'user' ? (key.userId ?? undefined) : undefined;
      const period = { start, end };
      if (csv && groupBy) {
        const { filename, body } = await deps.breakdowns.csv(account.id, period, groupBy, onlyUser);
        const headers = { 'Content-Disposition': `attachment; filename="${filename}"` };
        return { status: 200, type: 'text/csv', body, headers };
      }
      const page = { after: query.after, limit: query.limit ?? DEFAULT_PAGE, userId: onlyUser };
      const [balance, limits, breakdown] = await Promise.all([
        deps.balance(account.id),
        deps.rateLimits(account),
        groupBy ? deps.breakdowns.page(account.id, period, groupBy, page) : Promise.resolve(undefined),
      ]);
      const series = breakdown?.page;
      // A series that is the whole period (one page, every group) sums to the totals: one read, not two.
      const whole = series && query.after === undefined && !series.hasMore && onlyUser === undefined;
      const totals = whole ? sumOf(series.groups) : await deps.usage.totals(account.id, start, end);
      return {
        status: 200,
        body: {
          object: 'usage',
          account_id: account.id,
          tier: account.tier,
          credits: { balance: balance ?? account.credits },
          rate_limits: limits.windows,
          period: { start: new Date(start).toISOString(), end: new Date(end).toISOString() },
          totals: totalsBody(totals),
          ...(breakdown ? { series: breakdown.items, has_more: breakdown.page.hasMore } : {}),
        },
      };
    },
  };
}
