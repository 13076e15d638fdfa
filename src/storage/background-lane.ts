import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long the lane's work may hold the event loop at a time, ms. */
const SLICE_MS = 1;
/**
 * The pause between two slices while no writer is behind, ms: the lane takes at most ~11 % of the loop, and a
 * second's writes of 1,000 busy accounts (~110 ms of CPU on the bench's machine) spread over ~0.7 s of the next.
 * Measured at 1,000 req/s (per-request latencies, three 4 s windows each): 3 ms apart, the slowest 1 % took
 * 12.7-15.1 ms, bunched in the 300 ms after each second; 8 ms apart 5.1-10.3; 12 ms apart 4.9-7.1, but then a
 * second's writes need most of the next second and fall behind at any higher load.
 */
const GAP_MS = 8;

export interface BackgroundLaneOptions {
  sliceMs?: number;
  gapMs?: number;
}

/**
 * The event loop's lane for write-behind work done in chunks: the staging logs' generations, the SLA buckets.
 * A writer awaits `turn()` before each chunk. While the current slice (1 ms) has time left the writer goes on
 * at once; after that it waits for the next slice, 8 ms later, and the writers waiting take the slice in turn.
 *
 * Before the lane each writer ran a chunk every event-loop turn (`setImmediate`). Once a second the SLA
 * buckets, the usage rows and the admissions of 1,000 busy accounts closed together, and for ~200 ms every turn
 * ran a chunk of each: a request needs several turns (its body, the upstream call, the answer), so it
 * waited behind a chunk in each, and at 1,000 req/s the slowest 1 % of requests took 10-40 ms more, once a
 * second (measured: the server's CPU profile laid against per-request latencies).
 *
 * A writer that is behind (its next batch came before this one was written) or that someone waits on (a
 * read that must see the rows, close) asks with `hurry` (or calls `hurry()` for the writers already waiting):
 * it then runs a chunk every event-loop turn, outside the slices, as each writer did before the lane, so the
 * writers keep up with any load. Paced at every load instead (slices only), the writers fell behind under
 * saturation, and misses/s came out 5-19 % lower in three of four alternating throughput pairs (measured).
 */
export class BackgroundLane {
  readonly #sliceMs: number;
  readonly #gapMs: number;
  #sliceStart = Number.NEGATIVE_INFINITY;
  readonly #waiting: Array<() => void> = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(options: BackgroundLaneOptions = {}) {
    this.#sliceMs = options.sliceMs ?? SLICE_MS;
    this.#gapMs = options.gapMs ?? GAP_MS;
  }

  /** Resolves when the caller may run its next chunk. */
  turn(hurry = false): Promise<void> {
    // Behind or waited on: a chunk every event-loop turn, as each writer ran before the lane.
    if (hurry) return nextTurn();
    const inSlice = performance.now() - this.#sliceStart < this.#sliceMs;
    if (inSlice && this.#waiting.length === 0) return Promise.resolve();
    const mine = new Promise<void>((resolve) => this.#waiting.push(resolve));
    // Time left in the slice goes to the writer that has waited longest; this one queues behind it.
    if (inSlice) this.#waiting.shift()?.();
    else this.#arm();
    return mine;
  }

  /** Someone waits on the work under way (a read that must see it, close): the writers waiting go on next turn. */
  hurry(): void {
    const waiting = this.#waiting.splice(0);
    if (waiting.length === 0) return;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    setImmediate(() => {
      for (const resolve of waiting) resolve();
    });
  }

  /** Writers waiting for a slice (for tests and metrics). */
  get waiting(): number {
    return this.#waiting.length;
  }

  #arm(): void {
    if (this.#timer || this.#waiting.length === 0) return;
    const wait = Math.max(0, this.#sliceStart + this.#sliceMs + this.#gapMs - performance.now());
    this.#timer = setTimeout(() => this.#grant(), wait);
  }

  #grant(): void {
    this.#timer = undefined;
    this.#sliceStart = performance.now();
    this.#waiting.shift()?.();
    // Whoever is still waiting when this slice's writers stop asking gets the next one.
    this.#arm();
  }
}

/** The lane of this process's event loop: every write-behind writer shares it. */
export const backgroundLane = new BackgroundLane();
