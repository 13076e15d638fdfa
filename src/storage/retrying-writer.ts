import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { access, appendFile, mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';

/** Rows (or buckets) written together, under an id that stays theirs through every retry and spill. */
export interface PendingBatch<T> {
  id: string;
  items: T[];
}

/** What a writer holds and has done, for `/metrics`. */
export interface WriteBehindState {
  /** Items not yet written: in memory and in the spill file. */
  pending: number;
  /** Writes of a batch that had failed before, since the start. */
  retries: number;
  /** Items appended to the spill file since the start. */
  spilled: number;
}

export interface RetryingWriterOptions<T> {
  /**
   * Writes one batch in one transaction, or nothing of it. `batchId` is the same on every try of the batch, so a
   * store can tell a batch it has already committed (a commit whose answer was lost) and write it once.
   */
  write(items: T[], batchId: string): Promise<void>;
  /** Where batches go past `maxPending` and what is left at close: one JSON line a batch. Without it all stay in memory. */
  spillFile?: string | undefined;
  /** Items kept in memory (default 100,000); past them a failed batch is appended to the spill file. */
  maxPending?: number | undefined;
  /** The first retry's delay (default 100 ms), doubled after each failure up to `maxDelayMs` (default 5 s). */
  initialDelayMs?: number | undefined;
  maxDelayMs?: number | undefined;
  /** An item as the spill file holds it, and back (default: as it is). */
  encode?: ((item: T) => unknown) | undefined;
  decode?: ((logged: unknown) => T) | undefined;
  /** A write or a spill failed; `pending` items are kept and will be written again. */
  onError?: ((err: unknown, pending: number) => void) | undefined;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * The failure half of a write-behind buffer: a batch whose write fails is kept, never dropped while the process
 * lives, and written again after 100 ms, 200 ms… up to 5 s between tries, until the store takes it. While any
 * batch waits, new ones join the queue rather than each meeting the outage on its own. Memory is bounded: past
 * `maxPending` items a batch is appended to the spill file (in the data directory), and close() spills what is
 * still pending; a spill file found at start is written once the store answers, then removed. Every operation
 * runs in one chain, so the file is never read and appended at once. Reads call flush(): it writes what is
 * pending now and rejects with the store's error while the store is away.
 */
export class RetryingWriter<T> {
  readonly #write: (items: T[], batchId: string) => Promise<void>;
  readonly #spillFile: string | undefined;
  readonly #maxPending: number;
  readonly #initialDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #encode: (item: T) => unknown;
  readonly #decode: (logged: unknown) => T;
  readonly #onError: (err: unknown, pending: number) => void;
  readonly #memory: PendingBatch<T>[] = [];
  #memoryItems = 0;
  /** Items in the spill file (and in the one being drained): counted as appended, or when a start finds one. */
  #spilledItems = 0;
  /** A spill file may exist: set when one is appended or found, cleared when a drain finds none. */
  #spillPresent = false;
  #retries = 0;
  #spilledTotal = 0;
  #delayMs: number;
  #timer: NodeJS.Timeout | undefined;
  #chain: Promise<void> = Promise.resolve();

  constructor(options: RetryingWriterOptions<T>) {
    this.#write = options.write;
    this.#spillFile = options.spillFile;
    this.#maxPending = options.maxPending ?? 100_000;
    this.#initialDelayMs = options.initialDelayMs ?? 100;
    this.#maxDelayMs = options.maxDelayMs ?? 5000;
    this.#encode = options.encode ?? ((item) => item);
    this.#decode = options.decode ?? ((logged) => logged as T);
    this.#onError = options.onError ?? (() => undefined);
    this.#delayMs = this.#initialDelayMs;
    // A spill file left by an earlier process is counted and written in the background, as soon as the store answers.
    if (this.#spillFile) void this.#run(() => this.#countSpilled()).then(() => this.#retryAt(0));
  }

  state(): WriteBehindState {
    return { pending: this.#memoryItems + this.#spilledItems, retries: this.#retries, spilled: this.#spilledTotal };
  }

  /** Writes `items` as a new batch, or keeps them when the write fails; never rejects. */
  submit(items: T[]): Promise<void> {
    if (items.length === 0) return this.#chain;
    const batch: PendingBatch<T> = { id: randomUUID(), items };
    return this.#run(async () => {
      if (this.#behind()) return this.#keep(batch);
      try {
        await this.#write(batch.items, batch.id);
      } catch (err) {
        await this.#keep(batch);
        this.#failed(err);
      }
    });
  }

  /** Writes everything pending now; rejects with the store's error when something is still pending. */
  flush(): Promise<void> {
    const flushed = this.#run(() => this.#writePending());
    return flushed.catch((err: unknown) => {
      this.#retryAt(this.#delayMs);
      throw err;
    });
  }

  /** One last try; what it cannot write is spilled (and reported). Resolves once nothing is left in memory. */
  close(): Promise<void> {
    return this.#run(async () => {
      this.#cancelRetry();
      try {
        await this.#writePending();
        return;
      } catch (err) {
        this.#onError(err, this.#memoryItems + this.#spilledItems);
      }
      while (this.#memory.length > 0 && this.#spillFile) {
        const batch = this.#memory[0] as PendingBatch<T>;
        if (!(await this.#spill(batch))) break;
        this.#memory.shift();
        this.#memoryItems -= batch.items.length;
      }
    });
  }

  /** Runs `op` after every operation before it; the chain goes on whether it fails or not. */
  #run(op: () => Promise<void>): Promise<void> {
    const done = this.#chain.then(op);
    this.#chain = done.catch(() => undefined);
    return done;
  }

  #behind(): boolean {
    return this.#memory.length > 0 || this.#spillPresent;
  }

  /** A batch kept to retry: in memory up to the bound, past it in the spill file (in memory if even that fails). */
  async #keep(batch: PendingBatch<T>): Promise<void> {
    if (this.#spillFile && this.#memoryItems + batch.items.length > this.#maxPending && (await this.#spill(batch)))
      return;
    this.#memory.push(batch);
    this.#memoryItems += batch.items.length;
  }

  async #spill(batch: PendingBatch<T>): Promise<boolean> {
    const file = this.#spillFile as string;
    try {
      await mkdir(dirname(file), { recursive: true });
      await appendFile(file, `${JSON.stringify({ id: batch.id, items: batch.items.map(this.#encode) })}\n`);
    } catch (err) {
      this.#onError(err, this.#memoryItems + this.#spilledItems + batch.items.length);
      return false;
    }
    this.#spillPresent = true;
    this.#spilledItems += batch.items.length;
    this.#spilledTotal += batch.items.length;
    return true;
  }

  #failed(err: unknown): void {
    this.#onError(err, this.#memoryItems + this.#spilledItems);
    this.#retryAt(this.#delayMs);
    this.#delayMs = Math.min(this.#delayMs * 2, this.#maxDelayMs);
  }

  #retryAt(delayMs: number): void {
    if (this.#timer || !this.#behind()) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#run(async () => {
        try {
          await this.#writePending();
        } catch (err) {
          this.#failed(err);
        }
      });
    }, delayMs);
    // A pending retry does not keep a process alive: close() writes or spills what is left.
    this.#timer.unref();
  }

  #cancelRetry(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Memory's batches, oldest first, then the spill file's; throws at the first write that fails. */
  async #writePending(): Promise<void> {
    while (this.#memory.length > 0) {
      const batch = this.#memory[0] as PendingBatch<T>;
      this.#retries += 1;
      await this.#write(batch.items, batch.id);
      this.#memory.shift();
      this.#memoryItems -= batch.items.length;
    }
    await this.#drainSpill();
    this.#delayMs = this.#initialDelayMs;
  }

  /**
   * The spill file is renamed to `.draining` (new spills start a new file) and written batch by batch; on a failure
   * what is left of it replaces it, so a retry starts at the batch that failed. A process killed mid-way leaves it
   * whole: its batches are written again, which the store's batch ids make harmless (PostgreSQL).
   */
  async #drainSpill(): Promise<void> {
    const file = this.#spillFile;
    if (!file || !this.#spillPresent) return;
    const draining = `${file}.draining`;
    for (;;) {
      if (!(await exists(draining))) {
        if (!(await exists(file))) break;
        await rename(file, draining);
      }
      await this.#drainFile(draining);
      await rm(draining, { force: true });
    }
    this.#spillPresent = false;
    this.#spilledItems = 0;
  }

  async #drainFile(path: string): Promise<void> {
    const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
    let offset = 0;
    let failure: unknown;
    for await (const line of lines) {
      const batch = this.#parse(line, path);
      if (batch) {
        try {
          this.#retries += 1;
          await this.#write(batch.items, batch.id);
        } catch (err) {
          failure = err;
          break;
        }
        this.#spilledItems = Math.max(0, this.#spilledItems - batch.items.length);
      }
      offset += Buffer.byteLength(line) + 1;
    }
    lines.close();
    if (failure === undefined) return;
    // The rest, from the batch that failed, becomes the file.
    const rest = `${path}.rest`;
    await pipeline(createReadStream(path, { start: offset }), createWriteStream(rest));
    await rename(rest, path);
    throw failure;
  }

  #parse(line: string, path: string): PendingBatch<T> | undefined {
    if (line.trim() === '') return undefined;
    try {
      const logged = JSON.parse(line) as { id: string; items: unknown[] };
      return { id: logged.id, items: logged.items.map(this.#decode) };
    } catch (err) {
      // A line cut short by a crash while it was appended: nothing of it can be written.
      this.#onError(new Error(`skipped an unreadable line of ${path}: ${(err as Error).message}`), 0);
      return undefined;
    }
  }

  /** The items of the spill files a start finds (what `pending` reports until they are written). */
  async #countSpilled(): Promise<void> {
    const file = this.#spillFile as string;
    let items = 0;
    for (const path of [`${file}.draining`, file]) {
      if (!(await exists(path))) continue;
      for await (const line of createInterface({
        input: createReadStream(path),
        crlfDelay: Number.POSITIVE_INFINITY,
      })) {
        try {
          items += (JSON.parse(line) as { items: unknown[] }).items.length;
        } catch {
          // Reported when the drain meets it.
        }
      }
    }
    this.#spilledItems += items;
    if ((await exists(`${file}.draining`)) || (await exists(file))) this.#spillPresent = true;
  }
}
