import {
  type BackgroundLane,
  backgroundLane,
  RetryingWriter,
  type WriteBehindState,
  WriteBehindTimer,
} from '../storage/index.js';
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
  /** Buckets kept in memory while the database does not take them (default 20,000, ~1 KB each); past them spilled. */
  maxPending?: number;
  /** The file buckets are spilled to (one JSON line a chunk), written when the database is back, here or after a restart. */
  spillFile?: string;
  /** A write failed: its buckets are kept (`pending` buckets in all) and added again. */
  onError?: (err: unknown, pending: number) => void;
}

/** Whether a request counts against availability: a 5xx, or a stream ended by a 5xx failure. */
function isError(o: Pick<SlaObservation, 'status' | 'failedStatus'>): boolean {
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
 * hours. A chunk the database refuses is kept and retried under its batch id, spilled past the memory bound
 * (`storage/retrying-writer.ts`); the store adds a batch once however often it is tried. Reads flush first (and
 * fail with the store's error while buckets are pending); close() writes what is left, or spills it.
 *
 * A bucket object lives as long as its period, not one flush: a flush copies its counts out and zeroes
 * it. Made anew every second, 3,000 buckets of 1,000 busy accounts outlived two scavenges each and were
 * promoted to the old generation, ~1 MB of a scavenge's 1.8 MB at 1,000 req/s, to die there.
 */
export class SlaRecorder {
  readonly #writer: RetryingWriter<SlaBucket>;
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
    this.#writer = new RetryingWriter({
      write: (buckets, batchId) => store.add(buckets, batchId),
      spillFile: options.spillFile,
      maxPending: options.maxPending ?? 20_000,
      onError: options.onError,
    });
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

  /**
   * Adds every counted bucket to the store; resolves when they (and any write under way) are stored, rejects with the
   * store's error while some are still pending.
   */
  async flush(): Promise<void> {
    await this.#flush(true);
    await this.#writer.flush();
  }

  /** At a stop: one last try, what the database does not take is spilled to the file. */
  async close(): Promise<void> {
    await this.#flush(true);
    await this.#writer.close();
  }

  /** Buckets pending, retried and spilled (`/metrics`). */
  writeState(): WriteBehindState {
    return this.#writer.state();
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
        await this.#writer.submit(dirty.slice(at, at + CHUNK).map(takeCounts));
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
