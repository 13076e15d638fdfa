import { type BackgroundLane, backgroundLane, WriteBehindTimer } from '../storage/index.js';
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

/**
 * Buckets per write. A flush holds three buckets (minute, hour, day) per account, endpoint and model that
 * had requests in its second: with 1,000 busy accounts 3,000 upserts, ~12 ms of SQLite in one piece — a
 * stall every second that put 20-40 ms on the p99 of the requests behind it at 1,000 req/s. In chunks of
 * 96 (~0.4 ms each) that take turns in the event loop's background lane, requests run between them.
 */
const CHUNK = 96;
/** A series without a request for this long is forgotten (its buckets were written by then). */
const FORGET_AFTER_MS = 2 * RESOLUTION_MS.minute;

export interface SlaRecorderOptions {
  /** Longest an observation waits in memory before it is added to the stored buckets. */
  flushIntervalMs?: number;
  /** Where the chunks of a flush take their turns. Default: the process's lane. */
  lane?: BackgroundLane;
  onError?: (err: unknown, lost: number) => void;
}

/** Whether a request counts against availability: a 5xx, or a stream ended by a 5xx failure. */
export function isError(o: Pick<SlaObservation, 'status' | 'failedStatus'>): boolean {
  return o.status >= 500 || (o.failedStatus ?? 0) >= 500;
}

/** One account, endpoint and model: its current minute, hour and day buckets (in RESOLUTIONS order). */
interface Series {
  buckets: SlaBucket[];
  lastSeen: number;
}

/**
 * Write-behind for SLA buckets, like the usage store's buffer: observations are added to in-memory
 * buckets (one per account, endpoint, model and minute, hour and day), and every `flushIntervalMs`
 * the buckets that counted something are added to the stored ones. So the cost per request is a few
 * map updates, the cost per flush is O(distinct buckets), not O(requests). The rollup is done on write:
 * each observation goes to its minute, its hour and its day at once, so no job has to fold minutes into
 * hours. Reads flush first; close() flushes what is left.
 *
 * A bucket object lives as long as its period, not one flush: a flush copies its counts out and zeroes
 * it. Made anew every second, 3,000 buckets of 1,000 busy accounts outlived two scavenges each and were
 * promoted to the old generation, ~1 MB of a scavenge's 1.8 MB at 1,000 req/s, to die there.
 */
export class SlaRecorder {
  readonly #store: SlaStore;
  readonly #onError: (err: unknown, lost: number) => void;
  readonly #timer: WriteBehindTimer;
  readonly #series = new Map<string, Series>();
  /** Buckets with counts not yet written, each once: it is added when its first count since a write comes. */
  #dirty: SlaBucket[] = [];
  #nextForget = 0;
  #flushing: Promise<void> = Promise.resolve();
  /** Flushes begun and not ended: more than one means the timer's write fell behind. */
  #flushes = 0;
  /** Flushes someone waits on (a read, close): the lane is asked to hurry while there are any. */
  #awaited = 0;
  readonly #lane: BackgroundLane;

  constructor(store: SlaStore, options: SlaRecorderOptions = {}) {
    this.#store = store;
    this.#onError = options.onError ?? (() => undefined);
    this.#lane = options.lane ?? backgroundLane;
    this.#timer = new WriteBehindTimer(() => void this.#flush(false), options.flushIntervalMs ?? 1000);
  }

  record(o: SlaObservation): void {
    const error = isError(o);
    const status = Math.max(o.status, o.failedStatus ?? 0);
    const model = o.model ?? '';
    // One key and one lookup per request for its three buckets while they stay the current ones.
    const key = `${o.accountId}\u0000${o.endpoint}\u0000${model}`;
    let series = this.#series.get(key);
    if (!series) {
      series = { buckets: [], lastSeen: o.createdAt };
      this.#series.set(key, series);
    }
    series.lastSeen = o.createdAt;
    // The histogram buckets once, not once per resolution.
    const latencyBucket = bucketOf(o.latencyMs);
    const ttftBucket = o.ttftMs === undefined ? -1 : bucketOf(o.ttftMs);
    for (let r = 0; r < RESOLUTIONS.length; r++) {
      const resolution = RESOLUTIONS[r] as Resolution;
      const bucketStart = o.createdAt - (o.createdAt % RESOLUTION_MS[resolution]);
      let b = series.buckets[r];
      if (b?.bucketStart !== bucketStart) {
        b = emptyBucket({ accountId: o.accountId, resolution, bucketStart, endpoint: o.endpoint, model });
        series.buckets[r] = b;
      }
      if (b.requests === 0) this.#dirty.push(b);
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
    this.#timer.schedule();
  }

  /** Adds every counted bucket to the store; resolves when they (and any write under way) are stored. */
  flush(): Promise<void> {
    return this.#flush(true);
  }

  #flush(awaited: boolean): Promise<void> {
    this.#timer.cancel();
    const dirty = this.#dirty;
    this.#dirty = [];
    const previous = this.#flushing;
    this.#flushes += 1;
    if (awaited) {
      this.#awaited += 1;
      // A timed flush may be waiting for its next slice: it is waited on now.
      this.#lane.hurry();
    }
    this.#flushing = (async () => {
      await previous;
      for (let at = 0; at < dirty.length; at += CHUNK) {
        await this.#lane.turn(this.#awaited > 0 || this.#flushes > 1);
        // Counts are taken when their chunk is written: what came meanwhile is written with them.
        const chunk = dirty.slice(at, at + CHUNK).map(takeCounts);
        try {
          await this.#store.add(chunk);
        } catch (err) {
          this.#onError(err, requestsIn(chunk));
        }
      }
      this.#forgetIdleSeries();
    })().finally(() => {
      this.#flushes -= 1;
      if (awaited) this.#awaited -= 1;
    });
    return this.#flushing;
  }

  /** At most once a minute: series without requests for two minutes are dropped (nothing of theirs is pending). */
  #forgetIdleSeries(): void {
    const now = Date.now();
    if (now < this.#nextForget) return;
    this.#nextForget = now + RESOLUTION_MS.minute;
    for (const [key, series] of this.#series) {
      if (now - series.lastSeen < FORGET_AFTER_MS) continue;
      if (series.buckets.every((b) => b.requests === 0)) this.#series.delete(key);
    }
  }
}

function emptyBucket(key: BucketKey): SlaBucket {
  return {
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
}

/** A copy of the bucket's counts for the store, and the bucket zeroed: the next count marks it again. */
function takeCounts(b: SlaBucket): SlaBucket {
  const copy: SlaBucket = { ...b, latency: [...b.latency], ttft: [...b.ttft] };
  b.requests = 0;
  b.errors = 0;
  b.upstreamErrors = 0;
  b.timeouts = 0;
  b.latencySumMs = 0;
  b.latency.fill(0);
  b.ttftCount = 0;
  b.ttftSumMs = 0;
  b.ttft.fill(0);
  return copy;
}

/** The requests a failed write lost: each is counted once per resolution, so its minute buckets' sum. */
function requestsIn(chunk: readonly SlaBucket[]): number {
  let n = 0;
  for (const b of chunk) if (b.resolution === 'minute') n += b.requests;
  return n;
}
