/**
 * What the dashboard's middleware hand its pages through `ctx.state` (the signed-in account, the posted
 * form, the sign-in attempt the throttle let through), and which routes anyone may open.
 */
import type Router from 'koa-router';
import type { Upload } from '../http/index.js';
import type { Account } from '../kernel/index.js';
import type { PageSession } from './pages.js';
import type { Session } from './sessions.js';

/** The signed-in account holder, as middleware/session.ts finds them from the session cookie. */
export interface Signed {
  token: string;
  session: Session;
  account: Account;
  page: PageSession;
}

/** A sign-in the throttle let through: its time, and what tells the throttle it succeeded. */
interface SignInAttempt {
  now: number;
  succeeded(): Promise<void>;
}

interface DashboardState {
  signed?: Signed;
  form?: URLSearchParams;
  /** The file of a multipart form (the only one: the Documents page's upload). */
  upload?: Upload;
  signInAttempt?: SignInAttempt;
}

export type DashboardRouter = Router<DashboardState>;
export type DashboardMiddleware = Router.IMiddleware<DashboardState>;
type RouteOf = { method: string; _matchedRouteName: string | undefined };

/**
 * The routes anyone may open, by name (koa-router gives the middleware the matched route's name): every
 * other route is a page of the signed-in account.
 */
export const OPEN_ROUTES = { home: 'home', signIn: 'sign-in' } as const;

/** The one route whose form is multipart/form-data (a file): every other form is urlencoded. */
export const UPLOAD_ROUTE = 'document-upload';

export function isUploadPost(ctx: RouteOf): boolean {
  return ctx.method === 'POST' && ctx._matchedRouteName === UPLOAD_ROUTE;
}

export function isOpenRoute(ctx: RouteOf): boolean {
  return ctx._matchedRouteName === OPEN_ROUTES.home || ctx._matchedRouteName === OPEN_ROUTES.signIn;
}

/** The sign-in form's POST: checked by its own token, before any session exists. */
export function isSignInPost(ctx: RouteOf): boolean {
  return ctx.method === 'POST' && ctx._matchedRouteName === OPEN_ROUTES.signIn;
}

/** What an earlier middleware put in ctx.state for this route; its absence is a wiring mistake, never a request's. */
function stateOf<K extends keyof DashboardState>(
  ctx: { state: DashboardState },
  key: K,
  setBy: string,
): NonNullable<DashboardState[K]> {
  const value = ctx.state[key];
  if (value === undefined) throw new Error(`ctx.state.${key} is set by ${setBy}, which did not run`);
  return value as NonNullable<DashboardState[K]>;
}

/** The signed-in account of a page (middleware/session.ts lets no page run without one). */
export const signedIn = (ctx: { state: DashboardState }): Signed => stateOf(ctx, 'signed', 'middleware/session.ts');

/** The form of a POST, read and checked by middleware/csrf.ts. */
export const formOf = (ctx: { state: DashboardState }): URLSearchParams => stateOf(ctx, 'form', 'middleware/csrf.ts');

/** The multipart form's file and fields, read by middleware/csrf.ts (undefined: no file was sent). */
export const uploadOf = (ctx: { state: DashboardState }): Upload | undefined => ctx.state.upload;

/** The sign-in the throttle let through. */
export const signInAttemptOf = (ctx: { state: DashboardState }): SignInAttempt =>
  stateOf(ctx, 'signInAttempt', 'middleware/throttle.ts');
