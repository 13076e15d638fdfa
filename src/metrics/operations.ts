import type { Operations } from '../http/index.js';
import type { Metrics } from './metrics.js';

/** GET /metrics: the Prometheus text exposition format (unauthenticated, as the contract says). */
export function metricsOperations(metrics: Metrics): Operations<'getMetrics'> {
  return {
    getMetrics: async () => {
      const { text } = await metrics.exposition();
      return { status: 200, type: 'text/plain', body: text };
    },
  };
}
