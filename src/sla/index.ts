/** SLA monitoring: per-account buckets of requests, errors and latency histograms, and the report. */

export { slaCapability } from './capability.js';
export { BUCKET_COUNT, bucketOf, LATENCY_BOUNDS_MS, quantile } from './histogram.js';
export { type SlaReport, SlaService, type SlaWindow } from './sla-service.js';
export { SqlSlaStore } from './sql-sla-store.js';
export type { SlaBucket } from './types.js';
