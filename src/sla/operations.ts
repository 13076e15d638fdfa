import { type Operations, requirePrincipal } from '../http/index.js';
import type { TierPolicy } from '../tiers/index.js';
import type { Percentiles, SlaReport, SlaService, SlaWindow } from './sla-service.js';

const round = (x: number) => Math.round(x * 1e6) / 1e6;
const ms = (p: Percentiles) => ({ p50: p.p50, p95: p.p95, p99: p.p99 });

/** The report as the contract's SlaReport. */
function slaBody(report: SlaReport) {
  return {
    object: 'sla' as const,
    window: report.window,
    tier: report.tier,
    period: { start: new Date(report.start).toISOString(), end: new Date(report.end).toISOString() },
    models: report.models.map((m) => ({
      model: m.model,
      availability: round(m.availability),
      availability_target: m.availabilityTarget,
      requests: m.requests,
      errors: m.errors,
      upstream_errors: m.upstreamErrors,
      timeouts: m.timeouts,
      error_rate: round(m.errorRate),
      latency_ms: ms(m.latencyMs),
      time_to_first_token_ms: ms(m.timeToFirstTokenMs),
      latency_target_ms: m.latencyTargetMs,
      meets_target: m.meetsTarget,
    })),
  };
}

/** GET /z1/sla: not on the free tier (403 FEATURE_NOT_ALLOWED), else the account's report. */
export function slaOperations(deps: { sla: SlaService; tiers: TierPolicy }): Operations<'getSla'> {
  return {
    getSla: async ({ query }, call) => {
      const { account } = requirePrincipal(call);
      deps.tiers.requireFeature(account, 'sla');
      const report = await deps.sla.report(account, (query.window ?? '24h') as SlaWindow);
      return { status: 200, body: slaBody(report) };
    },
  };
}
