import type { Clock } from '../clock/index.js';
import { isModelId, type ModelId, type Tier } from '../kernel/index.js';
import type { WriteBehindState } from '../storage/index.js';
import { BUCKET_COUNT, quantile } from './histogram.js';
import { SlaRecorder, type SlaRecorderOptions } from './sla-recorder.js';
import { RESOLUTION_MS, type Resolution, type SlaBucket, type SlaObservation, type SlaStore } from './types.js';

export type SlaWindow = '1h' | '24h' | '7d' | '30d';

/** Which buckets answer a window: the finest resolution still kept for all of it, and how many. */
const WINDOWS: Readonly<Record<SlaWindow, { resolution: Resolution; buckets: number }>> = {
  '1h': { resolution: 'minute', buckets: 60 },
  '24h': { resolution: 'hour', buckets: 24 },
  '7d': { resolution: 'day', buckets: 7 },
  '30d': { resolution: 'day', buckets: 30 },
};

/**
 * How long each resolution is kept: minutes 6 h (the 1 h window needs one), hours 3 days (the 24 h
 * window needs 25 h; the rest is slack for a late prune), days 90 days (the 30 d window, and three months
 * of history for the dashboard).
 */
const RETENTION_MS: Readonly<Record<Resolution, number>> = {
  minute: 6 * 3_600_000,
  hour: 3 * 86_400_000,
  day: 90 * 86_400_000,
};

/** Pruning runs at most this often (clock time), from the request path, off its critical cost. */
const PRUNE_EVERY_MS = 10 * 60_000;

/** A tier's promise: availability at least this, p95 latency at most this. */
export interface SlaTargets {
  availability: number;
  latencyMs: number;
}

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
}

interface SlaModelReport {
  model: ModelId;
  requests: number;
  errors: number;
  upstreamErrors: number;
  timeouts: number;
  /** 1 − errors/requests; 1 with no requests. */
  availability: number;
  availabilityTarget: number;
  errorRate: number;
  latencyMs: Percentiles;
  timeToFirstTokenMs: Percentiles;
  latencyTargetMs: number;
  /** availability ≥ target and p95 latency ≤ the latency target. */
  meetsTarget: boolean;
}

export interface SlaReport {
  window: SlaWindow;
  tier: Tier;
  /** The buckets read: [start, end) in ms since the epoch, aligned to the window's resolution. */
  start: number;
  end: number;
  resolution: Resolution;
  models: SlaModelReport[];
}

export interface SlaServiceOptions extends SlaRecorderOptions {
  store: SlaStore;
  clock: Clock;
  targets(tier: Tier): SlaTargets;
  onPruneError?: (err: unknown) => void;
  /**
   * Whether an endpoint is one of the contract's operations: any other is counted as one endpoint,
   * `other`, not one per path a client tries. Default: every endpoint is.
   */
  isEndpoint?: (endpoint: string) => boolean;
}

function percentiles(counts: readonly number[]): Percentiles {
  return { p50: quantile(counts, 0.5), p95: quantile(counts, 0.95), p99: quantile(counts, 0.99) };
}

function addInto(into: SlaBucket, b: SlaBucket): void {
  into.requests += b.requests;
  into.errors += b.errors;
  into.upstreamErrors += b.upstreamErrors;
  into.timeouts += b.timeouts;
  into.latencySumMs += b.latencySumMs;
  into.ttftCount += b.ttftCount;
  into.ttftSumMs += b.ttftSumMs;
  for (let i = 0; i < BUCKET_COUNT; i++) {
    (into.latency[i] as number) += b.latency[i] as number;
    (into.ttft[i] as number) += b.ttft[i] as number;
  }
}

/**
 * SLA monitoring: every authenticated request is counted into per-account buckets (SlaRecorder), and a
 * report sums a window's buckets per model: O(buckets), never O(requests).
 */
export class SlaService {
  readonly #store: SlaStore;
  readonly #clock: Clock;
  readonly #targets: (tier: Tier) => SlaTargets;
  readonly #recorder: SlaRecorder;
  readonly #onPruneError: (err: unknown) => void;
  readonly #isEndpoint: (endpoint: string) => boolean;
  #nextPrune = 0;
  #pruning: Promise<void> = Promise.resolve();

  constructor(options: SlaServiceOptions) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.#targets = options.targets;
    this.#recorder = new SlaRecorder(options.store, options);
    this.#onPruneError = options.onPruneError ?? (() => undefined);
    this.#isEndpoint = options.isEndpoint ?? (() => true);
  }

  record(o: SlaObservation): void {
    this.#recorder.record(this.#isEndpoint(o.endpoint) ? o : { ...o, endpoint: 'other' });
    if (o.createdAt >= this.#nextPrune) {
      this.#nextPrune = o.createdAt + PRUNE_EVERY_MS;
      this.#pruning = this.#pruning
        .then(async () => {
          await this.prune(o.createdAt);
        })
        .catch(this.#onPruneError);
    }
  }

  /** Deletes the buckets past each resolution's retention; the number deleted. */
  async prune(now: number = this.#clock()): Promise<number> {
    let deleted = 0;
    for (const [resolution, keep] of Object.entries(RETENTION_MS) as Array<[Resolution, number]>) {
      deleted += await this.#store.prune(resolution, now - keep);
    }
    return deleted;
  }

  /** The account's availability, errors and latency per model over a window, against its tier's targets. */
  async report(account: { id: string; tier: Tier }, window: SlaWindow): Promise<SlaReport> {
    await this.#recorder.flush();
    const { resolution, buckets } = WINDOWS[window];
    const size = RESOLUTION_MS[resolution];
    const now = this.#clock();
    const end = now - (now % size) + size;
    const start = end - buckets * size;
    const rows = await this.#store.read(account.id, resolution, start, end);
    const byModel = new Map<string, SlaBucket>();
    for (const row of rows) {
      // Requests without a model (usage, documents…) and models outside the PV ids are not in the report.
      if (!isModelId(row.model)) continue;
      const sum = byModel.get(row.model);
      if (sum) addInto(sum, row);
      else byModel.set(row.model, { ...row, latency: [...row.latency], ttft: [...row.ttft] });
    }
    const targets = this.#targets(account.tier);
    const models = [...byModel.values()]
      .sort((a, b) => a.model.localeCompare(b.model))
      .map((s): SlaModelReport => {
        const errorRate = s.requests === 0 ? 0 : s.errors / s.requests;
        const latencyMs = percentiles(s.latency);
        const availability = 1 - errorRate;
        return {
          model: s.model as ModelId,
          requests: s.requests,
          errors: s.errors,
          upstreamErrors: s.upstreamErrors,
          timeouts: s.timeouts,
          availability,
          availabilityTarget: targets.availability,
          errorRate,
          latencyMs,
          timeToFirstTokenMs: s.ttftCount === 0 ? { p50: 0, p95: 0, p99: 0 } : percentiles(s.ttft),
          latencyTargetMs: targets.latencyMs,
          meetsTarget: availability >= targets.availability && latencyMs.p95 <= targets.latencyMs,
        };
      });
    return { window, tier: account.tier, start, end, resolution, models };
  }

  /** Stores what is still in memory (reads do this themselves). */
  flush(): Promise<void> {
    return this.#recorder.flush();
  }

  /** Buckets pending, retried and spilled (`/metrics`). */
  writeState(): WriteBehindState {
    return this.#recorder.writeState();
  }

  /** Writes what is left; what the database does not take is spilled to the file, for the next start. */
  async close(): Promise<void> {
    await this.#pruning;
    await this.#recorder.close();
  }
}
