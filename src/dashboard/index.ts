/**
 * The developer dashboard (/dashboard): HTML pages outside the contract where an account holder signs
 * in with email and password and manages their API keys, sees their usage, their SLA and their end
 * users' documents. Served through HttpPorts.extraRoutes; no CDN, no client framework.
 */

export { dashboardCapability } from './capability.js';
