import { AppError } from '../../errors/index.js';
import { jsonStream } from '../../http/index.js';
import { type DashboardRouter, formOf, signedIn } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { requiredEndUserIdOf } from '../end-user-id.js';
import { eraseConfirmPage, erasedPage } from '../user-data-pages.js';
import { DASHBOARD_PATH, download, seeOther, send } from '../web.js';
import { isKnownEndUser } from './documents.js';

/** The end user a request names (`user`, as the Documents page's form has it), exactly; none is a 404 page. */
function userOf(value: unknown): string {
  return requiredEndUserIdOf(value, 'Choose an end user first');
}

/**
 * /dashboard/users: export an end user's data (a download of the same JSON as the API's export) and erase it,
 * behind a page of its own where the user id must be typed out. Both act on the signed-in account only: the
 * user id names an end user inside it, never another account's. Only when the server has UserDataService.
 */
export function usersRoutes(
  router: DashboardRouter,
  deps: Pick<DashboardDeps, 'users' | 'documents' | 'memory'>,
): void {
  const { users } = deps;
  if (!users) return;
  // What the erase confirmation counts of the user's data.
  const preview = async (tenant: { accountId: string; userId: string }) => ({
    documents: (await deps.documents?.list(tenant))?.length,
    memories: (await deps.memory?.list(tenant))?.length,
  });

  router.get('/users/export', async (ctx) => {
    const userId = userOf(ctx.query.user);
    const body = await jsonStream(users.export({ accountId: signedIn(ctx).account.id, userId }));
    download(ctx, `pvai-export-${userId}.json`, body);
  });

  // An id the account holds nothing of (a typo) has nothing to erase: said so, never a confirmation form.
  const requireKnown = async (tenant: { accountId: string; userId: string }) => {
    if (!(await isKnownEndUser(users, tenant))) {
      throw new AppError('NOT_FOUND', `No such end user: ${JSON.stringify(tenant.userId)}. Nothing was erased.`);
    }
  };

  router.get('/users/erase', async (ctx) => {
    const signed = signedIn(ctx);
    const userId = userOf(ctx.query.user);
    await requireKnown({ accountId: signed.account.id, userId });
    const shown = await preview({ accountId: signed.account.id, userId });
    const error = ctx.query.mismatch === '1' ? 'The user id you typed does not match. Nothing was erased.' : undefined;
    send(ctx, 200, eraseConfirmPage({ session: signed.page, userId, preview: shown, ...(error ? { error } : {}) }));
  });

  router.post('/users/erase', async (ctx) => {
    const signed = signedIn(ctx);
    const form = formOf(ctx);
    const userId = userOf(form.get('user'));
    const tenant = { accountId: signed.account.id, userId };
    // Post/Redirect/Get, both ways: a reload shows the outcome again and posts nothing.
    await requireKnown(tenant);
    // Typed out, compared exactly as the API compares user ids: a slip of the hand erases nobody.
    if ((form.get('confirm') ?? '') !== userId) {
      return seeOther(ctx, `${DASHBOARD_PATH}/users/erase?${new URLSearchParams({ user: userId, mismatch: '1' })}`);
    }
    const erased = await users.erase(tenant);
    // What was erased rides in the query.
    const counts = new URLSearchParams({
      user: userId,
      documents: String(erased.documents),
      memories: String(erased.memories),
      usage: String(erased.usage),
    });
    seeOther(ctx, `${DASHBOARD_PATH}/users/erased?${counts}`);
  });

  router.get('/users/erased', (ctx) => {
    const userId = userOf(ctx.query.user);
    const count = (name: string) => Math.max(0, Math.trunc(Number(ctx.query[name]) || 0));
    const erased = { documents: count('documents'), memories: count('memories'), usage: count('usage') };
    send(ctx, 200, erasedPage({ session: signedIn(ctx).page, userId, erased }));
  });
}
