/** SLA monitoring: per-account buckets of requests, errors and latency histograms, and the report. */
export { BUCKET_COUNT, bucketOf, LATENCY_BOUNDS_MS, quantile } from './histogram.js';
export { slaBody, slaOperations } from './operations.js';
export { isError } from './sla-recorder.js';
export {
  type Percentiles,
  RETENTION_MS,
  type SlaModelReport,
  type SlaReport,
  SlaService,
  type SlaServiceOptions,
  type SlaTargets,
  type SlaWindow,
  WINDOWS,
} from './sla-service.js';
export { SqlSlaStore } from './sql-sla-store.js';
export type { Resolution, SlaBucket, SlaObservation, SlaStore } from './types.js';
