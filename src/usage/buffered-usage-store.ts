import { WriteBehindTimer } from '../storage/index.js';
import type { UsageGroupBy, UsageRecord, UsageStore, UsageTotals } from './types.js';

export interface BufferedUsageOptions {
  /** Longest a row waits before it is written. */
  flushIntervalMs?: number;
  /** Rows that trigger a write at once. */
  maxBatch?: number;
  onError?: (err: unknown, lost: number) => void;
}

/**
 * Write-behind for usage rows: rows collect in memory and are written in one multi-row INSERT at
 * most `flushIntervalMs` later. One write per batch instead of one per request keeps usage
 * recording off the request path's critical cost (on SQLite every write is a WAL commit). Reads
 * flush first, so a caller always sees its own requests; close() flushes what is left.
 */
export class BufferedUsageStore implements UsageStore {
  readonly #inner: UsageStore & { recordMany(rows: UsageRecord[]): Promise<void> };
  readonly #maxBatch: number;
  readonly #onError: (err: unknown, lost: number) => void;
  #buffer: UsageRecord[] = [];
  readonly #writes: WriteBehindTimer;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    inner: UsageStore & { recordMany(rows: UsageRecord[]): Promise<void> },
    options: BufferedUsageOptions = {},
  ) {
    this.#inner = inner;
    // #write() reports its own failures to onError.
    this.#writes = new WriteBehindTimer(() => void this.#write(), options.flushIntervalMs ?? 50);
    this.#maxBatch = options.maxBatch ?? 500;
    this.#onError = options.onError ?? (() => undefined);
  }

  async record(row: UsageRecord): Promise<void> {
    this.#buffer.push(row);
    if (this.#buffer.length >= this.#maxBatch) void this.#write();
    else this.#writes.schedule();
  }

  /**
   * Writes every buffered row and makes every row readable (the inner store's own write-behind included);
   * resolves when they (and any write already under way) are stored.
   */
  async flush(): Promise<void> {
    await this.#write();
    await this.#inner.flush();
  }

  /** Writes every buffered row; resolves when they (and any write already under way) are stored. */
  #write(): Promise<void> {
    this.#writes.cancel();
    const rows = this.#buffer;
    this.#buffer = [];
    const previous = this.#flushing;
    this.#flushing = (async () => {
      await previous;
      if (rows.length === 0) return;
      try {
        await this.#inner.recordMany(rows);
      } catch (err) {
        this.#onError(err, rows.length);
      }
    })();
    return this.#flushing;
  }

  async totals(accountId: string, start: number, end: number): Promise<UsageTotals> {
    await this.flush();
    return this.#inner.totals(accountId, start, end);
  }

  async series(accountId: string, start: number, end: number, groupBy: UsageGroupBy) {
    await this.flush();
    return this.#inner.series(accountId, start, end, groupBy);
  }
}
