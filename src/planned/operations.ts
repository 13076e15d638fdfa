import { AppError } from '../errors/index.js';
import { type Operation, type OperationId, type Operations, requirePrincipal } from '../http/index.js';
import type { TierPolicy } from '../tiers/index.js';

/** Operations whose capability comes later answer 503 after authentication, limits and validation. */
const unavailable =
  <K extends OperationId>(what: string): Operation<K> =>
  () => {
    throw new AppError('SERVICE_UNAVAILABLE', `${what} is not available on this server yet`);
  };

/**
 * The contract's operations whose capability is not built yet (SLA, metrics). Each
 * leaves this file when its capability folder lands with the real operations.
 */
export function plannedOperations(tiers: TierPolicy): Operations<'getSla' | 'getMetrics'> {
  return {
    getSla: (request, call) => {
      tiers.requireFeature(requirePrincipal(call).account, 'sla');
      return unavailable<'getSla'>('SLA monitoring')(request, call);
    },
    getMetrics: unavailable('Prometheus metrics'),
  };
}
