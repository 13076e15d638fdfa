import { storedSignInThrottle } from '../limits/index.js';
import type { Db } from '../storage/index.js';
import { DASHBOARD_PATH, dashboardRoutes } from './routes.js';
import { SessionStore } from './sessions.js';

type DashboardDeps = Parameters<typeof dashboardRoutes>[0];

/** The developer dashboard's pages, under /dashboard, outside the contract; sessions and sign-in throttle in the database. */
export function dashboardCapability({ db, ...deps }: Omit<DashboardDeps, 'sessions' | 'throttle'> & { db: Db }) {
  const middleware = dashboardRoutes({ ...deps, sessions: new SessionStore(db), throttle: storedSignInThrottle(db) });
  return { name: 'dashboard', pages: { prefix: DASHBOARD_PATH, middleware } };
}
