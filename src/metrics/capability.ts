import { Metrics, type MetricsOptions } from './metrics.js';
import { metricsOperations } from './operations.js';

/** Prometheus metrics: every request counted at its end, the engines' queues read at each scrape, `GET /metrics`. */
export function metricsCapability(options: MetricsOptions) {
  const service = new Metrics(options);
  return {
    name: 'metrics',
    service,
    operations: metricsOperations(service),
    endOfRequest: service.observeRequest.bind(service),
    /** The connection caps' refusals and idle closes, and the open connections' gauge. */
    connections: {
      refused: service.connectionRefused.bind(service),
      idleClosed: service.idleConnectionClosed.bind(service),
      openConnections: service.readOpenConnections.bind(service),
    },
  };
}
