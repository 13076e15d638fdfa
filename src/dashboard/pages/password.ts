import { type DashboardRouter, formOf, signedIn } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { PASSWORD_MAX, PASSWORD_MIN, PASSWORD_REFUSALS, type PasswordRefusal, passwordPage } from '../password-page.js';
import { DASHBOARD_PATH, seeOther, send } from '../web.js';

const isRefusal = (value: unknown): value is PasswordRefusal =>
  typeof value === 'string' && Object.hasOwn(PASSWORD_REFUSALS, value);

/**
 * The signed-in account holder changes their password: the current one checked as sign-in checks it, the new
 * one 8 to 256 characters, typed twice. Every answer to the POST is a 303 back to the page (Post/Redirect/Get:
 * a reload never sends the passwords again), with what happened in its query; a change ends the account's
 * other sessions, on every replica, and keeps this one.
 */
export function passwordRoutes(router: DashboardRouter, deps: Pick<DashboardDeps, 'accounts' | 'sessions'>): void {
  router.get('/password', (ctx) => {
    const error = isRefusal(ctx.query.error) ? ctx.query.error : undefined;
    const changed = ctx.query.changed === '1';
    send(ctx, 200, passwordPage({ session: signedIn(ctx).page, ...(error ? { error } : {}), changed }));
  });

  router.post('/password', async (ctx) => {
    const signed = signedIn(ctx);
    const form = formOf(ctx);
    const current = (form.get('current') ?? '').slice(0, PASSWORD_MAX);
    const password = form.get('password') ?? '';
    const refuse = (error: PasswordRefusal) => seeOther(ctx, `${DASHBOARD_PATH}/password?error=${error}`);
    // The current password first, so the other answers tell nothing to someone who does not know it.
    if (!current || !(await deps.accounts.verifySignIn(signed.account.email, current))) return refuse('current');
    if (password.length < PASSWORD_MIN || password.length > PASSWORD_MAX) return refuse('length');
    if (password !== form.get('repeat')) return refuse('mismatch');
    await deps.accounts.setPassword(signed.account.id, password);
    await deps.sessions.endOthers(signed.account.id, signed.token);
    seeOther(ctx, `${DASHBOARD_PATH}/password?changed=1`);
  });
}
