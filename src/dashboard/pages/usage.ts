import { type DashboardRouter, signedIn } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { usagePage } from '../pages.js';
import { send } from '../web.js';

const USAGE_DAYS = 30;
const DAY_MS = 86_400_000;

/** Usage: the daily rollup of the last USAGE_DAYS UTC days, the rate-limit windows and the balance. */
export function usageRoutes(
  router: DashboardRouter,
  deps: Pick<DashboardDeps, 'clock' | 'usage' | 'rateLimits' | 'accounts'>,
): void {
  router.get('/usage', async (ctx) => {
    const signed = signedIn(ctx);
    const now = deps.clock();
    const today = now - (now % DAY_MS);
    const start = today - (USAGE_DAYS - 1) * DAY_MS;
    await deps.usage.flush();
    const [rows, limits, account] = await Promise.all([
      deps.usage.days(signed.account.id, start, now + 1),
      deps.rateLimits(signed.account),
      deps.accounts.requireAccount(signed.account.id),
    ]);
    const days = Array.from({ length: USAGE_DAYS }, (_, i) => new Date(start + i * DAY_MS).toISOString().slice(0, 10));
    send(ctx, 200, usagePage({ session: signed.page, balance: account.credits, windows: limits.windows, days, rows }));
  });
}
