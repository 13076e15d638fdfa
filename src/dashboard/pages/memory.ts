import { type DashboardRouter, signedIn } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { endUserIdOf } from '../end-user-id.js';
import { memoryPage } from '../end-user-pages.js';
import { send } from '../web.js';
import { deleteOfEndUser, isKnownEndUser } from './documents.js';

/** Memory per end user, a page of its own: the user's memories, each deleted by its own POST. */
export function memoryRoutes(router: DashboardRouter, deps: Pick<DashboardDeps, 'memory' | 'users'>): void {
  router.get('/memory', async (ctx) => {
    const signed = signedIn(ctx);
    const userId = endUserIdOf(ctx.query.user) ?? '';
    const tenant = { accountId: signed.account.id, userId };
    const known = userId !== '' && (await isKnownEndUser(deps.users, tenant));
    const memories = known && deps.memory ? await deps.memory.list(tenant) : undefined;
    const notice = ctx.query.forgot === '1' ? 'Memory deleted.' : undefined;
    const page = { session: signed.page, userId, memories, known, available: deps.memory !== undefined, notice };
    send(ctx, userId && !known ? 404 : 200, memoryPage(page));
  });

  router.post('/memory/:id/delete', deleteOfEndUser(deps.memory, 'No such memory', 'memory', 'forgot'));
}
