import { loadContract, readMultipart } from '../../http/index.js';
import { secretsEqual } from '../../kernel/index.js';
import { type DashboardMiddleware, isSignInPost, isUploadPost, signedIn } from '../context.js';
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
    let form: URLSearchParams;
    if (isUploadPost(ctx) && ctx.is('multipart/form-data')) {
      // The file is read before the token is checked (it comes in the same body), within the API's limit.
      const upload = await readMultipart(ctx as unknown as Parameters<typeof readMultipart>[0], uploadLimitBytes());
      form = new URLSearchParams(upload.fields);
      if (upload.file) ctx.state.upload = upload;
    } else form = await readForm(ctx);
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

let uploadLimit: number | undefined;

/** The most a document upload may be: the API's (`createDocument`'s `x-body-limit-bytes` in the contract). */
function uploadLimitBytes(): number {
  if (uploadLimit === undefined) {
    const doc = loadContract().parse() as { paths: Record<string, Record<string, Record<string, unknown>>> };
    const limit = Object.values(doc.paths)
      .flatMap((path) => Object.values(path))
      .find((op) => op?.operationId === 'createDocument')?.['x-body-limit-bytes'];
    if (typeof limit !== 'number') throw new Error('the contract gives createDocument no x-body-limit-bytes');
    uploadLimit = limit;
  }
  return uploadLimit;
}
