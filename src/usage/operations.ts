import { json, type OperationHandlers, requirePrincipal } from '../http/handler.js';
import type { Services } from '../http/services.js';
import { utcMonthStart } from '../limits/windows.js';
import type { UsageGroupBy, UsageTotals } from './types.js';

/**
 * An RFC 3339 date (midnight UTC) or date-time, as the contract's Instant schema admits (already
 * checked there). A leap second (":60") counts as the second before it.
 */
function parseInstant(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value).replace(/:60(?=(\.\d+)?(Z|[+-]\d{2}:\d{2})$)/i, ':59');
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : Date.parse(text);
  return Number.isFinite(ms) ? ms : undefined;
}

function totalsBody(t: UsageTotals) {
  return {
    requests: t.requests,
    credits: t.credits,
    prompt_tokens: t.promptTokens,
    completion_tokens: t.completionTokens,
    total_tokens: t.promptTokens + t.completionTokens,
  };
}

export function usageHandlers(services: Services): OperationHandlers {
  return {
    getUsage: async (c, ctx) => {
      const { account } = requirePrincipal(ctx);
      const now = services.clock();
      const start = parseInstant(c.request.query.start) ?? utcMonthStart(now);
      // An end before the start is an empty period: no rows, zero totals.
      const end = Math.max(start, parseInstant(c.request.query.end) ?? now + 1);
      const groupBy = c.request.query.group_by as UsageGroupBy | undefined;
      const rules = services.config.tiers[account.tier];
      const [fresh, limits, totals, series] = await Promise.all([
        services.accounts.store.getAccount(account.id),
        services.limiter.peek(account.id, rules),
        services.usage.totals(account.id, start, end),
        groupBy ? services.usage.series(account.id, start, end, groupBy) : Promise.resolve(undefined),
      ]);
      json(ctx, 200, {
        object: 'usage',
        account_id: account.id,
        tier: account.tier,
        credits: { balance: fresh?.credits ?? account.credits },
        rate_limits: limits.windows,
        period: { start: new Date(start).toISOString(), end: new Date(end).toISOString() },
        totals: totalsBody(totals),
        ...(series ? { series: series.map((s) => ({ key: s.key, ...totalsBody(s) })) } : {}),
      });
    },
  };
}
