import type { RequestRecord } from '../http/index.js';
import type { BucketCounts } from './histogram.js';

/** One finished request as the SLA counts it: the fields of its RequestRecord it reads. */
export type SlaObservation = Pick<
  RequestRecord,
  'accountId' | 'endpoint' | 'model' | 'status' | 'latencyMs' | 'ttftMs' | 'failedStatus' | 'createdAt'
>;

/** Bucket sizes: every observation is added to one bucket of each. */
export type Resolution = 'minute' | 'hour' | 'day';

export const RESOLUTION_MS: Readonly<Record<Resolution, number>> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

/** Sums over requests: what a bucket row holds, and what adding rows gives. */
interface SlaCounts {
  requests: number;
  /** Requests answered 5xx, or streams ended by a 5xx failure: the ones availability counts against. */
  errors: number;
  /** Of the errors: upstream failures (502) and timeouts (504). */
  upstreamErrors: number;
  timeouts: number;
  latencySumMs: number;
  latency: BucketCounts;
  ttftCount: number;
  ttftSumMs: number;
  ttft: BucketCounts;
}

export interface BucketKey {
  accountId: string;
  resolution: Resolution;
  bucketStart: number;
  endpoint: string;
  /** '' for requests without a model. */
  model: string;
}

export interface SlaBucket extends BucketKey, SlaCounts {}

/** The storage port: adds to buckets (never overwrites, so replicas' writes sum) and reads them back. */
export interface SlaStore {
  /**
   * Adds each bucket's counts to the stored one (creating it), all or none. A `batchId` the store has added
   * before is not added again (a retry of a write whose success was not seen).
   */
  add(buckets: readonly SlaBucket[], batchId?: string): Promise<void>;
  /** Sums per model and endpoint of one account's buckets of a resolution with start in [from, to). */
  read(accountId: string, resolution: Resolution, from: number, to: number): Promise<SlaBucket[]>;
  /** Deletes buckets of a resolution that start before `before`; the number deleted. */
  prune(resolution: Resolution, before: number): Promise<number>;
}
