import type Koa from 'koa';
import { type DashboardMiddleware, isOpenRoute, isSignInPost, type Signed } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { messagePage } from '../pages.js';
import { cookieOptions, DASHBOARD_PATH, seeOther, send } from '../web.js';

const SESSION_COOKIE = 'pvai_session';
const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60_000;

type SessionDeps = Pick<DashboardDeps, 'clock' | 'sessions' | 'accounts'>;

/** The session and account of the session cookie, unless it has expired, was ended, or its account is gone. */
async function signedInBy(ctx: Koa.Context, deps: SessionDeps): Promise<Signed | undefined> {
  const token = ctx.cookies.get(SESSION_COOKIE);
  if (!token) return undefined;
  const session = await deps.sessions.find(token, deps.clock());
  if (!session) return undefined;
  const account = await deps.accounts.requireAccount(session.accountId).catch(() => undefined);
  if (!account) return undefined;
  return {
    token,
    session,
    account,
    page: {
      email: account.email,
      tier: account.tier,
      csrfToken: session.csrfToken,
      accountId: account.id,
      credits: account.credits,
    },
  };
}

/**
 * Who is signed in (`ctx.state.signed`), from a server-side session named by an HttpOnly SameSite=Strict
 * cookie. Every route but the open ones needs one: without it a GET goes to the sign-in page and anything
 * else is answered 401, before its form is read. The sign-in form's POST never reads the session.
 */
export function session(deps: SessionDeps): DashboardMiddleware {
  return async (ctx, next) => {
    if (isSignInPost(ctx)) return next();
    const signed = await signedInBy(ctx, deps);
    if (signed) {
      ctx.state.signed = signed;
    } else if (!isOpenRoute(ctx)) {
      if (ctx.method === 'GET' || ctx.method === 'HEAD') return seeOther(ctx, `${DASHBOARD_PATH}/sign-in`);
      return send(ctx, 401, messagePage({ title: 'Signed out', message: 'Your session has ended. Sign in again.' }));
    }
    await next();
  };
}

/** A new session for the account that just signed in, into its cookie. */
export async function startSession(
  ctx: Koa.Context,
  deps: Pick<DashboardDeps, 'sessions' | 'sessionTtlMs'>,
  accountId: string,
  now: number,
): Promise<void> {
  const ttlMs = deps.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
  const { token } = await deps.sessions.create(accountId, now, ttlMs);
  ctx.cookies.set(SESSION_COOKIE, token, cookieOptions(ctx, ttlMs));
}

/** The session ended on the server (the old cookie then signs no one in) and its cookie cleared. */
export async function endSession(ctx: Koa.Context, deps: Pick<DashboardDeps, 'sessions'>, signed: Signed) {
  await deps.sessions.end(signed.token);
  ctx.cookies.set(SESSION_COOKIE, '', cookieOptions(ctx, 0));
}
