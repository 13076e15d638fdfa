import { AppError } from '../../errors/index.js';
import { type DashboardRouter, formOf, signedIn } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { keysPage } from '../pages.js';
import { DASHBOARD_PATH, seeOther, send } from '../web.js';

/** API keys: the account's own, created (shown once), revoked and rotated; another account's ids are 404s. */
export function keysRoutes(router: DashboardRouter, deps: Pick<DashboardDeps, 'accounts'>): void {
  const keysOf = (accountId: string) => deps.accounts.listKeys(accountId);

  router.get('/keys', async (ctx) => {
    const signed = signedIn(ctx);
    const notice = ctx.query.revoked === '1' ? 'Key revoked: it no longer works.' : undefined;
    send(
      ctx,
      200,
      keysPage({ session: signed.page, keys: await keysOf(signed.account.id), ...(notice ? { notice } : {}) }),
    );
  });

  router.post('/keys', async (ctx) => {
    const signed = signedIn(ctx);
    const name = (formOf(ctx).get('name') ?? '').trim();
    if (!name || name.length > 100) {
      throw new AppError('INVALID_PARAMETER', 'A key needs a name of 1 to 100 characters', { field: 'name' });
    }
    const created = await deps.accounts.createKey(signed.account.id, name);
    send(ctx, 201, keysPage({ session: signed.page, keys: await keysOf(signed.account.id), created }));
  });

  router.post('/keys/:id/revoke', async (ctx) => {
    await deps.accounts.revokeOwnKey(signedIn(ctx).account.id, String(ctx.params.id));
    seeOther(ctx, `${DASHBOARD_PATH}/keys?revoked=1`);
  });

  router.post('/keys/:id/rotate', async (ctx) => {
    const signed = signedIn(ctx);
    const old = String(ctx.params.id);
    const created = await deps.accounts.rotateOwnKey(signed.account.id, old);
    const keys = await keysOf(signed.account.id);
    const prefix = keys.find((k) => k.id === old)?.prefix;
    send(
      ctx,
      201,
      keysPage({
        session: signed.page,
        keys,
        created: { ...created, ...(prefix ? { rotatedFrom: `${prefix}…` } : {}) },
      }),
    );
  });
}
