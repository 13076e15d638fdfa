import { AppError } from '../../errors/index.js';
import { type DashboardMiddleware, isOpenRoute } from '../context.js';
import { messagePage } from '../pages.js';
import { send } from '../web.js';

/**
 * A signed-in page's refusal (an AppError below 500: a 404 for another account's id, a form's invalid field)
 * as a page with its status; anything else goes on up, as do the open routes' errors.
 */
export const errorPages: DashboardMiddleware = async (ctx, next) => {
  const signed = ctx.state.signed;
  if (isOpenRoute(ctx) || !signed) return next();
  try {
    await next();
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    const title = err.status === 404 ? 'Not found' : 'Refused';
    send(ctx, err.status, messagePage({ title, message: err.message, session: signed.page }));
  }
};
