/** Prometheus metrics: one registry per runtime, fed by the request path and read from each capability. */
export { Metrics } from './metrics.js';
export { metricsOperations } from './operations.js';
