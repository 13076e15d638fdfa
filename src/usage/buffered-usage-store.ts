import { RetryingWriter, type WriteBehindState, WriteBehindTimer } from '../storage/index.js';
import type { GroupPageQuery, RollupGroupBy, UsageGroupBy, UsageRecord, UsageStore, UsageTotals } from './types.js';
import { logUsage, usageFromLog } from './usage-log-encoding.js';

export interface BufferedUsageOptions {
  /** Longest a row waits before it is written. */
  flushIntervalMs?: number;
  /** Rows that trigger a write at once. */
  maxBatch?: number;
  /** Rows kept in memory while the database does not take them (default 100,000); past them they are spilled. */
  maxPending?: number;
  /** The file rows are spilled to (one JSON line a batch), written when the database is back, here or after a restart. */
  spillFile?: string;
  /** A write failed: its rows are kept (`pending` rows in all) and written again. */
  onError?: (err: unknown, pending: number) => void;
}

/** The store's writes: a batch in one transaction, written once however often it is tried (its id). */
type BatchWriter = UsageStore & { recordMany(rows: UsageRecord[], batchId?: string): Promise<void> };

/**
 * Write-behind for usage rows: rows collect in memory and are written in one multi-row INSERT at
 * most `flushIntervalMs` later. One write per batch instead of one per request keeps usage
 * recording off the request path's critical cost (on SQLite every write is a WAL commit). A batch the
 * database refuses (a restart, an outage) is kept and retried, spilled to a file past the memory bound
 * (`storage/retrying-writer.ts`). Reads flush first, so a caller always sees its own requests, and fail with
 * the store's error while rows are still pending; close() writes what is left, or spills it.
 */
export class BufferedUsageStore implements UsageStore {
  readonly #inner: BatchWriter;
  readonly #maxBatch: number;
  #buffer: UsageRecord[] = [];
  readonly #writes: WriteBehindTimer;
  readonly #writer: RetryingWriter<UsageRecord>;

  constructor(inner: BatchWriter, options: BufferedUsageOptions = {}) {
    this.#inner = inner;
    // #write() never rejects: a failure keeps the rows with the writer, which reports it.
    this.#writes = new WriteBehindTimer(() => void this.#write(), options.flushIntervalMs ?? 50);
    this.#maxBatch = options.maxBatch ?? 500;
    this.#writer = new RetryingWriter({
      write: (rows, batchId) => inner.recordMany(rows, batchId),
      spillFile: options.spillFile,
      maxPending: options.maxPending,
      encode: logUsage,
      decode: usageFromLog,
      onError: options.onError,
    });
  }

  async record(row: UsageRecord): Promise<void> {
    this.#buffer.push(row);
    if (this.#buffer.length >= this.#maxBatch) void this.#write();
    else this.#writes.schedule();
  }

  /**
   * Writes every buffered and pending row and makes every row readable (the inner store's own write-behind
   * included); rejects with the store's error while some are still pending.
   */
  async flush(): Promise<void> {
    await this.#write();
    await this.#writer.flush();
    await this.#inner.flush();
  }

  /** At a stop: one last try, what the database does not take is spilled to the file. */
  async close(): Promise<void> {
    await this.#write();
    await this.#writer.close();
    await this.#inner.flush();
  }

  /** Rows pending, retried and spilled (`/metrics`). */
  writeState(): WriteBehindState {
    const state = this.#writer.state();
    return { ...state, pending: state.pending + this.#buffer.length };
  }

  /** Hands the buffered rows to the writer; resolves when they (and any write already under way) are tried. */
  #write(): Promise<void> {
    this.#writes.cancel();
    const rows = this.#buffer;
    this.#buffer = [];
    return this.#writer.submit(rows);
  }

  async totals(accountId: string, start: number, end: number): Promise<UsageTotals> {
    await this.flush();
    return this.#inner.totals(accountId, start, end);
  }

  async series(accountId: string, start: number, end: number, groupBy: RollupGroupBy) {
    await this.flush();
    return this.#inner.series(accountId, start, end, groupBy);
  }

  async groupPage(accountId: string, start: number, end: number, groupBy: UsageGroupBy, page: GroupPageQuery) {
    await this.flush();
    return this.#inner.groupPage(accountId, start, end, groupBy, page);
  }
}
