/**
 * The developer dashboard (/dashboard): HTML pages outside the contract where an account holder signs
 * in with email and password and manages their API keys, sees their usage, their SLA and their end
 * users' documents. Served through HttpPorts.extraRoutes; no CDN, no client framework.
 */
export {
  DASHBOARD_PATH,
  type DashboardDeps,
  type DashboardDocuments,
  type DashboardMemory,
  DEFAULT_SESSION_TTL_MS,
  dashboardRouter,
  dashboardRoutes,
} from './routes.js';
export { type Session, SessionStore } from './sessions.js';
export type { DashboardUsers } from './user-data-routes.js';
