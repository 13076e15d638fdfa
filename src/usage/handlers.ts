import { AppError } from '../errors/index.js';
import { json, type OperationHandlers, requirePrincipal } from '../http/handler.js';
import type { Services } from '../http/services.js';
import { utcMonthStart } from '../limits/windows.js';
import type { UsageGroupBy, UsageTotals } from './types.js';

function parseInstant(field: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  // A date (YYYY-MM-DD) or a full ISO 8601 date-time; nothing Date.parse would guess at.
  const ok = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text);
  const ms = ok ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new AppError('INVALID_PARAMETER', `${field} must be an ISO 8601 date or date-time`, {
      field,
      reason: 'must be an ISO 8601 date or date-time',
    });
  }
  return ms;
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
      const start = parseInstant('start', c.request.query.start) ?? utcMonthStart(now);
      const end = parseInstant('end', c.request.query.end) ?? now + 1;
      if (end <= start) {
        throw new AppError('INVALID_PARAMETER', 'end must be after start', {
          field: 'end',
          reason: 'must be after start',
        });
      }
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
