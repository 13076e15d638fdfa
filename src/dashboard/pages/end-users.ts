import { type DashboardRouter, signedIn } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { endUserIdOf } from '../end-user-id.js';
import { endUsersPage } from '../end-user-pages.js';
import { send } from '../web.js';

/** End users per page of the list. */
const PAGE_USERS = 50;

/** The account's end users (GET /z1/users's list), where the Documents and Memory pages start from. */
export function endUsersRoutes(router: DashboardRouter, deps: Pick<DashboardDeps, 'users'>): void {
  const { users } = deps;
  if (!users) return;
  router.get('/end-users', async (ctx) => {
    const signed = signedIn(ctx);
    const after = endUserIdOf(ctx.query.after, 'after');
    const page = await users.list(signed.account.id, { after, limit: PAGE_USERS });
    const next = page.hasMore ? page.users.at(-1)?.userId : undefined;
    send(ctx, 200, endUsersPage({ session: signed.page, users: page.users, next, paged: after !== undefined }));
  });
}
