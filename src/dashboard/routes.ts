import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import Router from 'koa-router';
import type { AccountService } from '../accounts/index.js';
import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import { type Account, secretsEqual } from '../kernel/index.js';
import type { RateLimitDecision, SignInThrottle } from '../limits/index.js';
import type { Tenant } from '../retrieval/index.js';
import type { SlaReport, SlaWindow } from '../sla/index.js';
import type { DailyUsage } from '../usage/index.js';
import { DASHBOARD_CSS, DASHBOARD_JS } from './assets.js';
import { endUserIdOf, requiredEndUserIdOf } from './end-user-id.js';
import {
  type DashboardDocument,
  type DashboardMemoryItem,
  documentsPage,
  keysPage,
  messagePage,
  type PageSession,
  SLA_WINDOWS,
  signInPage,
  slaPage,
  usagePage,
} from './pages.js';
import type { Session, SessionStore } from './sessions.js';
import { type DashboardUsers, userDataRoutes } from './user-data-routes.js';
import { CSRF_REFUSED, readForm, sameOrigin, seeOther, send } from './web.js';

export const DASHBOARD_PATH = '/dashboard';
const SESSION_COOKIE = 'pvai_session';
const SIGN_IN_COOKIE = 'pvai_sign_in';
const DEFAULT_SESSION_TTL_MS = 12 * 60 * 60_000;
const USAGE_DAYS = 30;
const DAY_MS = 86_400_000;

/** The documents of an end user, as the dashboard lists and deletes them (DocumentService). */
interface DashboardDocuments {
  list(tenant: Tenant): Promise<DashboardDocument[]>;
  delete(tenant: Tenant, id: string): Promise<void>;
}

/**
 * The memory of an end user: the Documents page lists each user's memories with a Delete button, posting
 * to /dashboard/memory/:id/delete (scoped to the signed-in account, like every call here).
 */
interface DashboardMemory {
  list(tenant: Tenant): Promise<DashboardMemoryItem[]>;
  delete(tenant: Tenant, id: string): Promise<void>;
}

export interface DashboardDeps {
  clock: Clock;
  sessions: SessionStore;
  accounts: AccountService;
  /** The daily usage rollup (never the raw rows), and a flush of the rows still buffered. */
  usage: {
    flush(): Promise<void>;
    days(accountId: string, start: number, end: number): Promise<DailyUsage[]>;
  };
  /** The account's rate-limit windows, without counting a request. */
  rateLimits(account: Account): Promise<RateLimitDecision>;
  documents?: DashboardDocuments;
  /** Memory per end user (see DashboardMemory). */
  memory?: DashboardMemory;
  /** An end user's data: export and erase, from the Documents page (user-data-routes.ts). */
  users?: DashboardUsers;
  /** SLA reports, for the tiers that have SLA monitoring. */
  sla?: {
    available(account: Account): boolean;
    report(account: Account, window: SlaWindow): Promise<SlaReport>;
  };
  /** Sign-in attempts per (email, address) and per address, shared through the database. */
  throttle: SignInThrottle;
  sessionTtlMs?: number;
}

interface Signed {
  token: string;
  session: Session;
  account: Account;
  page: PageSession;
}

/**
 * The developer dashboard under /dashboard: sign-in with email and password, a server-side session in
 * an HttpOnly SameSite=Strict cookie, a CSRF token on every state-changing form, and the pages (API
 * keys, usage, documents). Every page acts on the signed-in account only: ids in paths and forms are
 * checked against it, and another account's are answered as if they did not exist.
 */
function dashboardRouter(deps: DashboardDeps): Router {
  const { throttle } = deps;
  const ttlMs = deps.sessionTtlMs ?? DEFAULT_SESSION_TTL_MS;
  const router = new Router({ prefix: DASHBOARD_PATH });

  const cookieOptions = (ctx: Koa.Context, maxAge: number) =>
    ({
      httpOnly: true,
      sameSite: 'strict',
      path: DASHBOARD_PATH,
      secure: ctx.secure,
      maxAge,
      overwrite: true,
    }) as const;

  async function signedIn(ctx: Koa.Context): Promise<Signed | undefined> {
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
      page: { email: account.email, tier: account.tier, csrfToken: session.csrfToken },
    };
  }

  /** The page for a signed-in account; otherwise to the sign-in page (GET) or 401 (POST). */
  function page(
    handler: (ctx: Koa.Context, signed: Signed, form?: URLSearchParams) => Promise<void>,
  ): Router.IMiddleware {
    return async (ctx) => {
      const signed = await signedIn(ctx);
      if (!signed) {
        if (ctx.method === 'GET' || ctx.method === 'HEAD') return seeOther(ctx, `${DASHBOARD_PATH}/sign-in`);
        return send(ctx, 401, messagePage({ title: 'Signed out', message: 'Your session has ended. Sign in again.' }));
      }
      let form: URLSearchParams | undefined;
      if (ctx.method === 'POST') {
        form = await readForm(ctx);
        if (!sameOrigin(ctx) || !secretsEqual(form.get('_csrf') ?? '', signed.session.csrfToken)) {
          return send(ctx, 403, messagePage({ title: 'Refused', message: CSRF_REFUSED, session: signed.page }));
        }
      }
      try {
        await handler(ctx, signed, form);
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
        const title = err.status === 404 ? 'Not found' : 'Refused';
        send(ctx, err.status, messagePage({ title, message: err.message, session: signed.page }));
      }
    };
  }

  router.get('/assets/dashboard.css', (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = DASHBOARD_CSS;
  });
  router.get('/assets/dashboard.js', (ctx) => {
    ctx.type = 'application/javascript; charset=utf-8';
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = DASHBOARD_JS;
  });

  router.get('/', async (ctx) => seeOther(ctx, `${DASHBOARD_PATH}/${(await signedIn(ctx)) ? 'keys' : 'sign-in'}`));

  const signInForm = (ctx: Koa.Context, status: number, o: { email?: string; error?: string } = {}) => {
    // A sign-in token (double-submit cookie): a sign-in form posted from another site is refused.
    const csrfToken = randomBytes(24).toString('base64url');
    ctx.cookies.set(SIGN_IN_COOKIE, csrfToken, cookieOptions(ctx, 60 * 60_000));
    send(ctx, status, signInPage({ csrfToken, ...o }));
  };

  router.get('/sign-in', async (ctx) => {
    if (await signedIn(ctx)) return seeOther(ctx, `${DASHBOARD_PATH}/keys`);
    signInForm(ctx, 200);
  });

  router.post('/sign-in', async (ctx) => {
    const form = await readForm(ctx);
    const expected = ctx.cookies.get(SIGN_IN_COOKIE) ?? '';
    if (!sameOrigin(ctx) || !expected || !secretsEqual(form.get('_csrf') ?? '', expected)) {
      return signInForm(ctx, 403, { error: CSRF_REFUSED });
    }
    const email = (form.get('email') ?? '').trim().toLowerCase().slice(0, 320);
    const password = (form.get('password') ?? '').slice(0, 256);
    const now = deps.clock();
    // The throttle's refusal (limits/): its status and Retry-After, its message on the form.
    const refusal = await throttle.attempt(email, ctx.ip, now);
    if (refusal) {
      ctx.set(refusal.headers);
      return signInForm(ctx, refusal.status, { email, error: refusal.message });
    }
    const account = email && password ? await deps.accounts.verifySignIn(email, password) : undefined;
    if (!account) {
      return signInForm(ctx, 401, { email, error: 'The email or the password is wrong.' });
    }
    await throttle.succeeded(email, ctx.ip, now);
    const { token } = await deps.sessions.create(account.id, now, ttlMs);
    ctx.cookies.set(SESSION_COOKIE, token, cookieOptions(ctx, ttlMs));
    ctx.cookies.set(SIGN_IN_COOKIE, '', cookieOptions(ctx, 0));
    seeOther(ctx, `${DASHBOARD_PATH}/keys`);
  });

  router.post(
    '/sign-out',
    page(async (ctx, signed) => {
      await deps.sessions.end(signed.token);
      ctx.cookies.set(SESSION_COOKIE, '', cookieOptions(ctx, 0));
      seeOther(ctx, `${DASHBOARD_PATH}/sign-in`);
    }),
  );

  // API keys
  const keysOf = (accountId: string) => deps.accounts.listKeys(accountId);
  router.get(
    '/keys',
    page(async (ctx, signed) => {
      const notice = ctx.query.revoked === '1' ? 'Key revoked: it no longer works.' : undefined;
      send(
        ctx,
        200,
        keysPage({ session: signed.page, keys: await keysOf(signed.account.id), ...(notice ? { notice } : {}) }),
      );
    }),
  );
  router.post(
    '/keys',
    page(async (ctx, signed, form) => {
      const name = (form?.get('name') ?? '').trim();
      if (!name || name.length > 100) {
        throw new AppError('INVALID_PARAMETER', 'A key needs a name of 1 to 100 characters', { field: 'name' });
      }
      const created = await deps.accounts.createKey(signed.account.id, name);
      send(ctx, 201, keysPage({ session: signed.page, keys: await keysOf(signed.account.id), created }));
    }),
  );
  router.post(
    '/keys/:id/revoke',
    page(async (ctx, signed) => {
      await deps.accounts.revokeOwnKey(signed.account.id, String(ctx.params.id));
      seeOther(ctx, `${DASHBOARD_PATH}/keys?revoked=1`);
    }),
  );
  router.post(
    '/keys/:id/rotate',
    page(async (ctx, signed) => {
      const old = String(ctx.params.id);
      const created = await deps.accounts.rotateOwnKey(signed.account.id, old);
      const keys = await keysOf(signed.account.id);
      const prefix = keys.find((k) => k.id === old)?.prefix;
      send(
        ctx,
        201,
        keysPage({
          session: signed.page,
          keys,
          created: { ...created, ...(prefix ? { rotatedFrom: `${prefix}…` } : {}) },
        }),
      );
    }),
  );

  // Usage: the daily rollup of the last USAGE_DAYS UTC days, the rate-limit windows and the balance.
  router.get(
    '/usage',
    page(async (ctx, signed) => {
      const now = deps.clock();
      const today = now - (now % DAY_MS);
      const start = today - (USAGE_DAYS - 1) * DAY_MS;
      await deps.usage.flush();
      const [rows, limits, account] = await Promise.all([
        deps.usage.days(signed.account.id, start, now + 1),
        deps.rateLimits(signed.account),
        deps.accounts.requireAccount(signed.account.id),
      ]);
      const days = Array.from({ length: USAGE_DAYS }, (_, i) =>
        new Date(start + i * DAY_MS).toISOString().slice(0, 10),
      );
      send(
        ctx,
        200,
        usagePage({ session: signed.page, balance: account.credits, windows: limits.windows, days, rows }),
      );
    }),
  );

  router.post(
    '/memory/:id/delete',
    page(async (ctx, signed, form) => {
      const userId = requiredEndUserIdOf(form?.get('user'), 'No such memory');
      if (!deps.memory) throw new AppError('NOT_FOUND', 'No such memory');
      await deps.memory.delete({ accountId: signed.account.id, userId }, String(ctx.params.id));
      seeOther(ctx, `${DASHBOARD_PATH}/documents?user=${encodeURIComponent(userId)}&forgot=1`);
    }),
  );

  // SLA: availability and latency per model against the tier's targets (tiers that have it).
  router.get(
    '/sla',
    page(async (ctx, signed) => {
      const asked = String(ctx.query.window ?? '24h');
      const window = (SLA_WINDOWS as readonly string[]).includes(asked) ? (asked as SlaWindow) : '24h';
      const report =
        deps.sla?.available(signed.account) === true ? await deps.sla.report(signed.account, window) : undefined;
      send(ctx, 200, slaPage({ session: signed.page, window, ...(report ? { report } : {}) }));
    }),
  );

  // Documents per end user (the account's own: every DocumentService call is scoped to the account).
  router.get(
    '/documents',
    page(async (ctx, signed) => {
      const userId = endUserIdOf(ctx.query.user) ?? '';
      const tenant = { accountId: signed.account.id, userId };
      const documents = userId && deps.documents ? await deps.documents.list(tenant) : undefined;
      const memories = userId && deps.memory ? await deps.memory.list(tenant) : undefined;
      const notice =
        ctx.query.deleted === '1' ? 'Document deleted.' : ctx.query.forgot === '1' ? 'Memory deleted.' : undefined;
      send(
        ctx,
        200,
        documentsPage({
          session: signed.page,
          userId,
          documents,
          memories,
          memoryAvailable: deps.memory !== undefined,
          userData: deps.users !== undefined,
          ...(notice ? { notice } : {}),
        }),
      );
    }),
  );
  router.post(
    '/documents/:id/delete',
    page(async (ctx, signed, form) => {
      const userId = requiredEndUserIdOf(form?.get('user'), 'No such document');
      if (!deps.documents) throw new AppError('NOT_FOUND', 'No such document');
      await deps.documents.delete({ accountId: signed.account.id, userId }, String(ctx.params.id));
      seeOther(ctx, `${DASHBOARD_PATH}/documents?user=${encodeURIComponent(userId)}&deleted=1`);
    }),
  );

  if (deps.users) {
    userDataRoutes(router, page, {
      users: deps.users,
      preview: async (tenant) => ({
        documents: (await deps.documents?.list(tenant))?.length,
        memories: (await deps.memory?.list(tenant))?.length,
      }),
    });
  }

  return router;
}

/** The dashboard as one middleware: its routes, and a page for anything else under /dashboard. */
export function dashboardRoutes(deps: DashboardDeps): Koa.Middleware {
  const router = dashboardRouter(deps);
  const routes = router.routes() as unknown as Koa.Middleware;
  // The dashboard answers everything under its path: nothing goes on to the contract's routing.
  return async (ctx) => {
    await routes(ctx, async () => undefined);
    if (ctx.body === undefined && ctx.status === 404) {
      send(ctx, 404, messagePage({ title: 'Not found', message: 'There is no such dashboard page.' }));
    }
  };
}
