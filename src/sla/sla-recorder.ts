import { WriteBehindTimer } from '../storage/index.js';
import { bucketOf, emptyCounts } from './histogram.js';
import {
  type BucketKey,
  RESOLUTION_MS,
  type Resolution,
  type SlaBucket,
  type SlaObservation,
  type SlaStore,
} from './types.js';

const RESOLUTIONS: readonly Resolution[] = ['minute', 'hour', 'day'];

export interface SlaRecorderOptions {
  /** Longest an observation waits in memory before it is added to the stored buckets. */
  flushIntervalMs?: number;
  onError?: (err: unknown, lost: number) => void;
}

function keyOf(k: BucketKey): string {
  return `${k.accountId}\u0000${k.resolution}\u0000${k.bucketStart}\u0000${k.endpoint}\u0000${k.model}`;
}

/** Whether a request counts against availability: a 5xx, or a stream ended by a 5xx failure. */
export function isError(o: Pick<SlaObservation, 'status' | 'failedStatus'>): boolean {
  return o.status >= 500 || (o.failedStatus ?? 0) >= 500;
}

/**
 * Write-behind for SLA buckets, like the usage store's buffer: observations are added to in-memory
 * buckets (one per account, endpoint, model and minute, hour and day), and every `flushIntervalMs`
 * those few rows are added to the stored ones in one transaction. So the cost per request is a few map
 * updates, the cost per flush is O(distinct buckets), not O(requests). The rollup is done on write:
 * each observation goes to its minute, its hour and its day at once, so no job has to fold minutes into
 * hours. Reads flush first; close() flushes what is left.
 */
export class SlaRecorder {
  readonly #store: SlaStore;
  readonly #onError: (err: unknown, lost: number) => void;
  readonly #timer: WriteBehindTimer;
  #pending = new Map<string, SlaBucket>();
  /** Per account, endpoint and model: its pending minute, hour and day buckets (in RESOLUTIONS order). */
  #current = new Map<string, SlaBucket[]>();
  #requestsPending = 0;
  #flushing: Promise<void> = Promise.resolve();

  constructor(store: SlaStore, options: SlaRecorderOptions = {}) {
    this.#store = store;
    this.#onError = options.onError ?? (() => undefined);
    this.#timer = new WriteBehindTimer(() => void this.flush(), options.flushIntervalMs ?? 1000);
  }

  record(o: SlaObservation): void {
    const error = isError(o);
    const status = Math.max(o.status, o.failedStatus ?? 0);
    const model = o.model ?? '';
    // One key and one lookup per request for its three buckets while they stay the current ones (a
    // minute at most): the full key is built only when a bucket starts.
    const series = `${o.accountId}\u0000${o.endpoint}\u0000${model}`;
    let current = this.#current.get(series);
    if (!current) {
      current = [];
      this.#current.set(series, current);
    }
    // The histogram buckets once, not once per resolution.
    const latencyBucket = bucketOf(o.latencyMs);
    const ttftBucket = o.ttftMs === undefined ? -1 : bucketOf(o.ttftMs);
    for (let r = 0; r < RESOLUTIONS.length; r++) {
      const resolution = RESOLUTIONS[r] as Resolution;
      const bucketStart = o.createdAt - (o.createdAt % RESOLUTION_MS[resolution]);
      let b = current[r];
      if (b?.bucketStart !== bucketStart) {
        b = this.#bucket({ accountId: o.accountId, resolution, bucketStart, endpoint: o.endpoint, model });
        current[r] = b;
      }
      b.requests += 1;
      if (error) b.errors += 1;
      if (error && status === 502) b.upstreamErrors += 1;
      if (error && status === 504) b.timeouts += 1;
      b.latencySumMs += o.latencyMs;
      (b.latency[latencyBucket] as number)++;
      if (o.ttftMs !== undefined) {
        b.ttftCount += 1;
        b.ttftSumMs += o.ttftMs;
        (b.ttft[ttftBucket] as number)++;
      }
    }
    this.#requestsPending += 1;
    this.#timer.schedule();
  }

  /** The pending bucket of the key, created empty when there is none. */
  #bucket(key: BucketKey): SlaBucket {
    const id = keyOf(key);
    let b = this.#pending.get(id);
    if (!b) {
      b = {
        ...key,
        requests: 0,
        errors: 0,
        upstreamErrors: 0,
        timeouts: 0,
        latencySumMs: 0,
        latency: emptyCounts(),
        ttftCount: 0,
        ttftSumMs: 0,
        ttft: emptyCounts(),
      };
      this.#pending.set(id, b);
    }
    return b;
  }

  /** Adds every pending bucket to the store; resolves when they (and any write under way) are stored. */
  flush(): Promise<void> {
    this.#timer.cancel();
    const buckets = [...this.#pending.values()];
    const lost = this.#requestsPending;
    this.#pending = new Map();
    this.#current = new Map();
    this.#requestsPending = 0;
    const previous = this.#flushing;
    this.#flushing = (async () => {
      await previous;
      if (buckets.length === 0) return;
      try {
        await this.#store.add(buckets);
      } catch (err) {
        this.#onError(err, lost);
      }
    })();
    return this.#flushing;
  }
}
