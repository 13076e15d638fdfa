import type { DashboardRouter } from '../context.js';
import type { DashboardDeps } from '../deps.js';
import { deleteOfEndUser } from './documents.js';

/** An end user's memory, listed on the Documents page: its Delete button's POST. */
export function memoryRoutes(router: DashboardRouter, deps: Pick<DashboardDeps, 'memory'>): void {
  router.post('/memory/:id/delete', deleteOfEndUser(deps.memory, 'No such memory', 'forgot'));
}
