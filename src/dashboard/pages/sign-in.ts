import { type DashboardRouter, formOf, OPEN_ROUTES, signedIn, signInAttemptOf } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { endSession, startSession } from '../middleware/session.js';
import { clearSignInToken, credentialsOf, showSignInForm } from '../sign-in-form.js';
import { DASHBOARD_PATH, seeOther } from '../web.js';

/**
 * Signing in and out: /dashboard itself (to the keys when signed in, else to the sign-in page), the sign-in
 * form (its token and the throttle checked by the middleware before the password), and signing out.
 */
export function signInRoutes(router: DashboardRouter, deps: DashboardDeps): void {
  router.get(OPEN_ROUTES.home, '/', (ctx) =>
    seeOther(ctx, `${DASHBOARD_PATH}/${ctx.state.signed ? 'keys' : 'sign-in'}`),
  );

  router.get(OPEN_ROUTES.signIn, '/sign-in', (ctx) => {
    if (ctx.state.signed) return seeOther(ctx, `${DASHBOARD_PATH}/keys`);
    showSignInForm(ctx, 200);
  });

  router.post(OPEN_ROUTES.signIn, '/sign-in', async (ctx) => {
    const { email, password } = credentialsOf(formOf(ctx));
    const attempt = signInAttemptOf(ctx);
    const account = email && password ? await deps.accounts.verifySignIn(email, password) : undefined;
    if (!account) {
      return showSignInForm(ctx, 401, { email, error: 'The email or the password is wrong.' });
    }
    await attempt.succeeded();
    await startSession(ctx, deps, account.id, attempt.now);
    clearSignInToken(ctx);
    seeOther(ctx, `${DASHBOARD_PATH}/keys`);
  });

  router.post('/sign-out', async (ctx) => {
    await endSession(ctx, deps, signedIn(ctx));
    seeOther(ctx, `${DASHBOARD_PATH}/sign-in`);
  });
}
