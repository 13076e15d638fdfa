import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock/index.js';
import { type BackgroundLane, backgroundLane, WriteBehindTimer } from '../storage/index.js';
import type { SqlRequestLogStore } from './sql-request-log-store.js';
import type { LoggedRequest } from './types.js';

const DAY_MS = 86_400_000;
/** How often the retention's sweep runs, at most: on the first request after it is due. */
const SWEEP_EVERY_MS = 3_600_000;
/** Rows written (or swept) per transaction, each chunk in its own turn of the background lane. */
const CHUNK_ROWS = 64;

export interface RequestLogWriterOptions {
  clock: Clock;
  /** Rows older than this many days are deleted. */
  retentionDays: number;
  /** Longest a row waits before it is written (default 100 ms). */
  flushIntervalMs?: number;
  /**
   * Rows kept while the database does not take them (default 50,000); past them the oldest are dropped and
   * reported: request logs are the account's view of its traffic, not its bill (usage rows are, and are never dropped).
   */
  maxPending?: number;
  /** A write or a sweep failed (rows kept to write again), or rows were dropped past `maxPending`. */
  onError?: (err: unknown, pending: number) => void;
  lane?: BackgroundLane;
}

/**
 * Request logs written behind the requests: a request's record is pushed on a list (nothing else on its path),
 * and at most `flushIntervalMs` later the list is written in chunks of CHUNK_ROWS rows, one transaction and one
 * turn of the background lane each, so no event-loop turn is held longer than a chunk's INSERT. A chunk the
 * database refuses goes back to the front and is tried again after 100 ms … 5 s. Reads call flush() first, so
 * an account sees its own requests. The retention's sweep runs at most hourly, started by the request that
 * finds it due (by the records' clock, so a test's manual clock drives it), in chunks through the lane too.
 */
export class RequestLogWriter {
  readonly #store: SqlRequestLogStore;
  readonly #clock: Clock;
  readonly #keepMs: number;
  readonly #maxPending: number;
  readonly #onError: (err: unknown, pending: number) => void;
  readonly #lane: BackgroundLane;
  readonly #timer: WriteBehindTimer;
  #rows: LoggedRequest[] = [];
  /** The write under way (one at a time); undefined when none. */
  #writing: Promise<void> | undefined;
  #retryDelayMs = 100;
  #retryTimer: NodeJS.Timeout | undefined;
  #lastError: unknown;
  #nextSweep = 0;
  #sweeping: Promise<unknown> = Promise.resolve();

  constructor(store: SqlRequestLogStore, options: RequestLogWriterOptions) {
    this.#store = store;
    this.#clock = options.clock;
    this.#keepMs = options.retentionDays * DAY_MS;
    this.#maxPending = options.maxPending ?? 50_000;
    this.#onError = options.onError ?? (() => undefined);
    this.#lane = options.lane ?? backgroundLane;
    this.#timer = new WriteBehindTimer(() => void this.#write(), options.flushIntervalMs ?? 100);
  }

  /** The end of a request: its record kept to write (returns nothing, so no promise is made per request). */
  record(row: LoggedRequest): void {
    this.#rows.push(row);
    if (this.#rows.length > this.#maxPending) {
      const dropped = this.#rows.splice(0, this.#rows.length - this.#maxPending).length;
      this.#onError(new Error(`${dropped} request logs dropped: the database has not taken them`), this.#rows.length);
    }
    if (!this.#writing && !this.#retryTimer) this.#timer.schedule();
    if (row.createdAt >= this.#nextSweep) {
      this.#nextSweep = row.createdAt + SWEEP_EVERY_MS;
      this.#sweeping = this.#sweeping.then(() => this.sweep(row.createdAt)).catch((err) => this.#onError(err, 0));
    }
  }

  /** Writes every row recorded so far, to the table; rejects with the database's error when some could not be. */
  async flush(): Promise<void> {
    while (this.#writing) await this.#writing;
    await this.#write(true);
    // Checked before the drain: rows recorded while it runs are the next flush's, not a failure of this one.
    if (this.#rows.length > 0) throw this.#lastError ?? new Error('request logs are still pending');
    // What the store staged (SQLite, the owning server) reaches the table before a read or a delete.
    await this.#store.drain();
  }

  /** Rows not yet written (`/metrics`-style state, and the tests). */
  pending(): number {
    return this.#rows.length;
  }

  /** Deletes the rows older than the retention as of `now`; how many. */
  async sweep(now: number = this.#clock()): Promise<number> {
    // The rows recorded before the sweep are written first, so none older than the retention outlives it.
    await this.flush().catch(() => undefined);
    let deleted = 0;
    for (;;) {
      await this.#lane.turn();
      const n = await this.#store.deleteBefore(now - this.#keepMs, CHUNK_ROWS * 16);
      deleted += n;
      if (n < CHUNK_ROWS * 16) return deleted;
    }
  }

  /** At a stop: one last try (what the database does not take is reported and lost). */
  async close(): Promise<void> {
    this.#timer.cancel();
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    await this.#sweeping;
    try {
      await this.flush();
    } catch (err) {
      this.#onError(err, this.#rows.length);
    }
  }

  /** Writes the rows in chunks until none is left or one fails; one write at a time. */
  #write(hurry = false): Promise<void> {
    this.#timer.cancel();
    if (this.#writing) return this.#writing;
    if (this.#rows.length === 0) return Promise.resolve();
    this.#writing = this.#writeChunks(hurry).finally(() => {
      this.#writing = undefined;
      // Rows recorded between the last chunk and now saw a write under way and set no timer.
      if (this.#rows.length > 0 && !this.#retryTimer) this.#timer.schedule();
    });
    return this.#writing;
  }

  async #writeChunks(hurry: boolean): Promise<void> {
    while (this.#rows.length > 0) {
      await this.#lane.turn(hurry || this.#rows.length > CHUNK_ROWS * 4);
      const chunk = this.#rows.splice(0, CHUNK_ROWS);
      try {
        await this.#store.insert(chunk, randomUUID());
      } catch (err) {
        // Back to the front, in order, for the next try.
        this.#rows.unshift(...chunk);
        this.#lastError = err;
        this.#onError(err, this.#rows.length);
        this.#retryLater();
        return;
      }
      this.#retryDelayMs = 100;
      this.#lastError = undefined;
    }
  }

  #retryLater(): void {
    if (this.#retryTimer) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      void this.#write();
    }, this.#retryDelayMs);
    this.#retryTimer.unref();
    this.#retryDelayMs = Math.min(this.#retryDelayMs * 2, 5000);
  }
}
