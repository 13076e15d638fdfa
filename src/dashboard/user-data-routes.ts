import type Koa from 'koa';
import type Router from 'koa-router';
import { jsonStream, type Streamed } from '../http/index.js';
import type { Account } from '../kernel/index.js';
import type { Tenant } from '../retrieval/index.js';
import type { Erased, UserExport } from '../users/index.js';
import { requiredEndUserIdOf } from './end-user-id.js';
import type { PageSession } from './pages.js';
import { eraseConfirmPage, erasedPage, type UserDataPreview } from './user-data-pages.js';
import { download, send } from './web.js';

/** An end user's data, for the dashboard's per-user page (UserDataService). */
export interface DashboardUsers {
  export(tenant: Tenant): Streamed<UserExport>;
  erase(tenant: Tenant): Promise<Erased>;
}

/** What a page's handler gets of the signed-in account (routes.ts gives more). */
interface SignedIn {
  account: Account;
  page: PageSession;
}

/** routes.ts's wrapper of a page: the session, the CSRF check of a POST, errors as pages. */
export type PageRoute = (
  handler: (ctx: Koa.Context, signed: SignedIn, form?: URLSearchParams) => Promise<void>,
) => Router.IMiddleware;

/** The end user a request names (`user`, as the Documents page's form has it), exactly; none is a 404 page. */
function userOf(value: unknown): string {
  return requiredEndUserIdOf(value, 'Choose an end user first');
}

/**
 * /dashboard/users: export an end user's data (a download of the same JSON as the API's export) and erase it,
 * behind a page of its own where the user id must be typed out. Both act on the signed-in account only: the
 * user id names an end user inside it, never another account's.
 */
export function userDataRoutes(
  router: Router,
  page: PageRoute,
  deps: { users: DashboardUsers; preview(tenant: Tenant): Promise<UserDataPreview> },
): void {
  router.get(
    '/users/export',
    page(async (ctx, signed) => {
      const userId = userOf(ctx.query.user);
      const body = await jsonStream(deps.users.export({ accountId: signed.account.id, userId }));
      download(ctx, `pvai-export-${userId}.json`, body);
    }),
  );
  router.get(
    '/users/erase',
    page(async (ctx, signed) => {
      const userId = userOf(ctx.query.user);
      const preview = await deps.preview({ accountId: signed.account.id, userId });
      send(ctx, 200, eraseConfirmPage({ session: signed.page, userId, preview }));
    }),
  );
  router.post(
    '/users/erase',
    page(async (ctx, signed, form) => {
      const userId = userOf(form?.get('user'));
      const tenant = { accountId: signed.account.id, userId };
      // Typed out, compared exactly as the API compares user ids: a slip of the hand erases nobody.
      if ((form?.get('confirm') ?? '') !== userId) {
        const preview = await deps.preview(tenant);
        const error = 'The user id you typed does not match. Nothing was erased.';
        return send(ctx, 400, eraseConfirmPage({ session: signed.page, userId, preview, error }));
      }
      const erased = await deps.users.erase(tenant);
      send(ctx, 200, erasedPage({ session: signed.page, userId, erased }));
    }),
  );
}
