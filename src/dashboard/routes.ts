import type Koa from 'koa';
import Router from 'koa-router';
import type { DashboardMiddleware, DashboardRouter } from './context.js';
import type { DashboardDeps } from './deps.js';
import { csrf } from './middleware/csrf.js';
import { errorPages } from './middleware/error-pages.js';
import { session } from './middleware/session.js';
import { signInThrottle } from './middleware/throttle.js';
import { assetRoutes } from './pages/assets.js';
import { documentsRoutes } from './pages/documents.js';
import { endUsersRoutes } from './pages/end-users.js';
import { keysRoutes } from './pages/keys.js';
import { logsRoutes } from './pages/logs.js';
import { memoryRoutes } from './pages/memory.js';
import { modelsRoutes } from './pages/models.js';
import { passwordRoutes } from './pages/password.js';
import { signInRoutes } from './pages/sign-in.js';
import { slaRoutes } from './pages/sla.js';
import { usageRoutes } from './pages/usage.js';
import { usersRoutes } from './pages/users.js';
import { messagePage } from './pages.js';
import { DASHBOARD_PATH, send } from './web.js';

export { DASHBOARD_PATH } from './web.js';

/**
 * What every matched dashboard route goes through before its handler, in this order: who is signed in (a
 * page needs a session), the form of a POST and its CSRF token, the sign-in throttle, and a signed-in page's
 * refusals as pages. koa-router runs them only for a route that matched, so anything else is the 404 page.
 */
function middleware(deps: DashboardDeps): DashboardMiddleware[] {
  return [session(deps), csrf(), signInThrottle(deps), errorPages];
}

/** The pages, one file each under pages/: each registers its own GET and POST routes. */
const PAGES: ReadonlyArray<(router: DashboardRouter, deps: DashboardDeps) => void> = [
  signInRoutes,
  keysRoutes,
  usageRoutes,
  logsRoutes,
  slaRoutes,
  endUsersRoutes,
  documentsRoutes,
  memoryRoutes,
  usersRoutes,
  passwordRoutes,
  modelsRoutes,
];

/**
 * The developer dashboard under /dashboard: sign-in with email and password, a server-side session in
 * an HttpOnly SameSite=Strict cookie, a CSRF token on every state-changing form, and the pages (API
 * keys, usage, documents). Every page acts on the signed-in account only: ids in paths and forms are
 * checked against it, and another account's are answered as if they did not exist.
 */
function dashboardRouter(deps: DashboardDeps): DashboardRouter {
  const router: DashboardRouter = new Router({ prefix: DASHBOARD_PATH });
  router.use(...middleware(deps));
  for (const registerPage of PAGES) registerPage(router, deps);
  return router;
}

/** The dashboard as one middleware: its assets, its routes, and a page for anything else under /dashboard. */
export function dashboardRoutes(deps: DashboardDeps): Koa.Middleware {
  const assets = assetRoutes().routes() as unknown as Koa.Middleware;
  const pages = dashboardRouter(deps).routes() as unknown as Koa.Middleware;
  // The dashboard answers everything under its path: nothing goes on to the contract's routing.
  return async (ctx) => {
    await assets(ctx, () => pages(ctx, async () => undefined));
    if (ctx.body === undefined && ctx.status === 404) {
      send(ctx, 404, messagePage({ title: 'Not found', message: 'There is no such dashboard page.' }));
    }
  };
}
