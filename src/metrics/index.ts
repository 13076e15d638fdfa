/** Prometheus metrics: one registry per runtime, fed by the request path and read from each capability. */
export {
  type ConnectionScope,
  type MetricSources,
  Metrics,
  type MetricsOptions,
  type QueueState,
  type RequestSample,
} from './metrics.js';
export { metricsOperations } from './operations.js';
