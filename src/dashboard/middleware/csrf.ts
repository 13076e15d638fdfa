import { secretsEqual } from '../../kernel/index.js';
import { type DashboardMiddleware, isSignInPost, signedIn } from '../context.js';
import { messagePage } from '../pages.js';
import { showSignInForm, signInToken } from '../sign-in-form.js';
import { CSRF_REFUSED, readForm, sameOrigin, send } from '../web.js';

/**
 * Every POST's form, read (`ctx.state.form`) and checked: from this dashboard's origin, with the token of
 * the session (the sign-in form: of the sign-in cookie, as no session exists yet). Refused with 403: the
 * sign-in form shown again with a fresh token, any other form a page saying so.
 */
export function csrf(): DashboardMiddleware {
  return async (ctx, next) => {
    if (ctx.method !== 'POST') return next();
    const form = await readForm(ctx);
    const posted = form.get('_csrf') ?? '';
    if (isSignInPost(ctx)) {
      const expected = signInToken(ctx);
      if (!sameOrigin(ctx) || !expected || !secretsEqual(posted, expected)) {
        return showSignInForm(ctx, 403, { error: CSRF_REFUSED });
      }
    } else {
      const signed = signedIn(ctx);
      if (!sameOrigin(ctx) || !secretsEqual(posted, signed.session.csrfToken)) {
        return send(ctx, 403, messagePage({ title: 'Refused', message: CSRF_REFUSED, session: signed.page }));
      }
    }
    ctx.state.form = form;
    await next();
  };
}
