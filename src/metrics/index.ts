/** Prometheus metrics: one registry per runtime, fed by the request path and read from each capability. */

export { metricsCapability } from './capability.js';
export { Metrics } from './metrics.js';
