import { formatNumber, type Html, html } from './html.js';

/**
 * The fewest requests a latency percentile is shown for. The SLA's percentiles are estimates from fixed
 * histogram buckets (src/sla/histogram.ts, interpolated within a bucket), so one 600 ms request reads as
 * p50 750 / p95 975 / p99 995 ms. A q-percentile says something only once about 1/(1−q) requests lie above
 * it: p95 needs 20, p99 100; p50 waits for 10 so that a handful of requests is not read as a median.
 */
export const PERCENTILE_MIN_REQUESTS = { p50: 10, p95: 20, p99: 100 } as const;
export type Percentile = keyof typeof PERCENTILE_MIN_REQUESTS;

/** Whether `requests` in the window support the percentile. */
export function percentileShown(which: Percentile, requests: number): boolean {
  return requests >= PERCENTILE_MIN_REQUESTS[which];
}

/**
 * A percentile's table cell: "≈ 750 ms" (an estimate, said in its title) when the sample supports it, else "—"
 * with a title saying how many requests it needs.
 */
export function percentileCell(which: Percentile, requests: number, ms: number): Html {
  if (!percentileShown(which, requests)) {
    const needed = PERCENTILE_MIN_REQUESTS[which];
    return html`<td class="num"><span title="${which} is shown from ${needed} requests in the window; this one has ${formatNumber(requests)}">—</span></td>`;
  }
  return html`<td class="num"><span title="estimated from latency buckets: within the width of the bucket it falls in">≈ ${formatNumber(Math.round(ms))} ms</span></td>`;
}
