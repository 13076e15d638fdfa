import { type DashboardMiddleware, formOf, isSignInPost } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { credentialsOf, showSignInForm } from '../sign-in-form.js';

/**
 * The sign-in form's POST, counted per (email, address) and per address (limits/' SignInThrottle, shared
 * through the database) before the password is checked. A refusal is the throttle's status and Retry-After
 * with its message on the form; an attempt let through leaves `ctx.state.signInAttempt`, whose success
 * the sign-in page reports.
 */
export function signInThrottle(deps: Pick<DashboardDeps, 'clock' | 'throttle'>): DashboardMiddleware {
  return async (ctx, next) => {
    if (!isSignInPost(ctx)) return next();
    const { email } = credentialsOf(formOf(ctx));
    const now = deps.clock();
    const refusal = await deps.throttle.attempt(email, ctx.ip, now);
    if (refusal) {
      ctx.set(refusal.headers);
      return showSignInForm(ctx, refusal.status, { email, error: refusal.message });
    }
    ctx.state.signInAttempt = { now, succeeded: () => deps.throttle.succeeded(email, ctx.ip, now) };
    await next();
  };
}
