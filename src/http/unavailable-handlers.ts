import { AppError } from '../errors/index.js';
import type { OperationHandler, OperationHandlers } from './handler.js';
import { requirePrincipal } from './handler.js';
import type { Services } from './services.js';

/** Operations whose engine comes later answer 503 after authentication, limits and validation. */
const unavailable =
  (what: string): OperationHandler =>
  () => {
    throw new AppError('SERVICE_UNAVAILABLE', `${what} is not available on this server yet`);
  };

export function unavailableHandlers(services: Services): OperationHandlers {
  const memory = unavailable('Memory');
  const rag = unavailable('Document retrieval');
  return {
    listMemories: memory,
    createMemory: memory,
    deleteUserMemories: memory,
    updateMemory: memory,
    deleteMemory: memory,
    searchMemories: memory,
    createDocument: rag,
    listDocuments: rag,
    getDocument: rag,
    deleteDocument: rag,
    searchDocuments: rag,
    getSla: (c, ctx) => {
      const { account } = requirePrincipal(ctx);
      if (!services.config.tiers[account.tier].slaEndpoint) {
        throw new AppError('FEATURE_NOT_ALLOWED', `SLA monitoring is not part of the ${account.tier} tier`, {
          feature: 'sla',
          tier: account.tier,
        });
      }
      return unavailable('SLA monitoring')(c, ctx);
    },
    getMetrics: unavailable('Prometheus metrics'),
  };
}
