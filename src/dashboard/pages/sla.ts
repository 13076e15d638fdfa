import type { SlaWindow } from '../../sla/index.js';
import { type DashboardRouter, signedIn } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { SLA_WINDOWS, slaPage } from '../pages.js';
import { send } from '../web.js';

/** SLA: availability and latency per model against the tier's targets (tiers that have it). */
export function slaRoutes(router: DashboardRouter, deps: Pick<DashboardDeps, 'sla'>): void {
  router.get('/sla', async (ctx) => {
    const signed = signedIn(ctx);
    const asked = String(ctx.query.window ?? '24h');
    const window = (SLA_WINDOWS as readonly string[]).includes(asked) ? (asked as SlaWindow) : '24h';
    const report =
      deps.sla?.available(signed.account) === true ? await deps.sla.report(signed.account, window) : undefined;
    send(ctx, 200, slaPage({ session: signed.page, window, ...(report ? { report } : {}) }));
  });
}
