import type BetterSqlite3 from 'better-sqlite3';
import { type BackgroundLane, backgroundLane } from './background-lane.js';

/** What a store stages, and how its items are written where they belong. */
export interface StagedStream<T> {
  /** The stream's name in the log: one per kind of item (`admissions`, `usage`). */
  readonly name: string;
  /** What items are sorted and cut by (an account id): the items of one key are written in one chunk. */
  key(item: T): string;
  /** Writes items where they belong (the store's own tables), inside the caller's transaction. */
  write(items: readonly T[]): void;
  /**
   * An item as the log's JSON holds it, when the item itself carries more than `write` needs or spells it
   * long (the item is logged as is without it). `decode` must read what `encode` made, and items logged as
   * they are (a log written before the stream had an encoding).
   */
  encode?(item: T): unknown;
  decode?(logged: unknown): T;
}

export interface StagingLogOptions {
  /** How long a generation of staged items gathers before it is written where it belongs. Default 2000. */
  generationMs?: number;
  /**
   * Items a chunk of that write holds, at most (a key's items are never cut). Default: as many as the last
   * chunks' cost says fit in CHUNK_BUDGET_MS.
   */
  chunkItems?: number;
  /** Where the chunks take their turns. Default: the process's lane. */
  lane?: BackgroundLane;
  onError?: (err: unknown) => void;
}

interface Generation<T> {
  gen: number;
  /** Sorted by key once the generation closes. */
  items: T[];
  /** Items before this index are written (their keys are in `staging_done`). */
  next: number;
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * How long one chunk of a generation's write should take, ms: half the background lane's 1 ms slice, so a
 * chunk started late in a slice overruns it by little. A chunk's commit has a fixed cost its items share (the
 * pages every chunk rewrites: the tables' last pages, the database header, `staging_done`): measured at
 * saturation with 1,000 busy accounts (bench:chat's miss load, the server's SQLite calls timed), a commit cost
 * 65 µs in chunks of 16 items and 187 µs in chunks of 256, and the generations' writes 9.8 µs of SQLite a
 * request with chunks of 16, 6.5 with chunks of 256. So chunks are as large as fit the budget at the cost per
 * item measured so far (usage rows, ~3-4 µs each, come out ~120 a chunk; admissions, ~1 µs, several hundred).
 */
const CHUNK_BUDGET_MS = 0.5;
/** A chunk's items before anything is measured, and at least (a commit slower than the budget still writes). */
const MIN_CHUNK_ITEMS = 16;
const MAX_CHUNK_ITEMS = 1024;
/** Weight of the newest chunk in the cost per item: a few chunks follow a change of load. */
const COST_WEIGHT = 0.3;

/**
 * A write-ahead log for what the embedded server decides per request and writes behind: each commit appends
 * its items as one JSON row to `staging_log` (the pages at the log's end only, ~1 µs an item), and once a
 * generation (2 s) has gathered they are written where they belong, sorted by key, a chunk per event-loop
 * turn. Written straight away, every item touched the b-tree pages of its account in its own commit: at
 * 1,000 busy accounts a rate-limit admission cost ~25 µs and a usage row ~20 µs of SQLite, most of it pages
 * written to the WAL again and again; written later in key order, an account's pages are written once for
 * all its items of the generation. Two seconds rather than one: an account with a request a second has two
 * items a page write instead of one, and at 1,000 such accounts the usage rows took 27 ms a second instead of
 * 39-43, the admissions 12-13 instead of 19-22 (measured at 1,000 req/s, two pairs). Nothing waits longer to
 * be durable (the log row is, at once) or to be read (readers drain first). The chunks take turns in the
 * event loop's background lane (`background-lane.ts`), so a generation's items are written beside the
 * requests, not in one stretch between them; a log with a generation waiting behind the one being written,
 * or with a reader waiting on it (`drain`), asks the lane to hurry.
 *
 * Durable all the way: a chunk's write and the mark that its keys are done (`staging_done`) commit together,
 * and a generation's log rows go only once all of it is written. A process that starts over the log (after a
 * crash) writes what is not marked done, then empties it. One log per connection and stream (`stagingLogOf`),
 * made only by the process that owns the database: it alone stages, writes and recovers.
 */
export class StagingLog<T> {
  readonly #stream: StagedStream<T>;
  readonly #sqlite: BetterSqlite3.Database;
  readonly #generationMs: number;
  /** A fixed chunk size (the option), or undefined: sized by CHUNK_BUDGET_MS. */
  readonly #chunkItems: number | undefined;
  /** What an item of a chunk cost to write, its commit's share included, ms (a moving average). */
  #msPerItem: number | undefined;
  readonly #onError: (err: unknown) => void;
  readonly #lane: BackgroundLane;
  readonly #append: BetterSqlite3.Statement;
  readonly #markDone: BetterSqlite3.Statement;
  readonly #writeChunk: (gen: number, items: readonly T[]) => void;
  /** Items as the log holds them (the stream's encoding), and back. */
  readonly #logged: (items: readonly T[]) => readonly unknown[];
  readonly #fromLog: (logged: unknown[]) => T[];
  readonly #forget: (gen: number) => void;
  #gen = 1;
  /** Staged by the transaction under way, not yet known to be committed. */
  #tentative: T[] = [];
  #open: T[] = [];
  readonly #closed: Generation<T>[] = [];
  /** Items of each key staged and not yet written where they belong. */
  readonly #pendingKeys = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> | undefined;
  /** Callers of drain() waiting for the write to end. */
  #draining = 0;

  constructor(sqlite: BetterSqlite3.Database, stream: StagedStream<T>, options: StagingLogOptions = {}) {
    this.#sqlite = sqlite;
    this.#stream = stream;
    this.#generationMs = options.generationMs ?? 2000;
    this.#chunkItems = options.chunkItems;
    this.#onError = options.onError ?? (() => undefined);
    this.#lane = options.lane ?? backgroundLane;
    this.#append = sqlite.prepare('INSERT INTO staging_log (stream, gen, body) VALUES (?, ?, ?)');
    this.#markDone = sqlite.prepare('INSERT INTO staging_done (stream, gen, first_key, last_key) VALUES (?, ?, ?, ?)');
    const dropLog = sqlite.prepare('DELETE FROM staging_log WHERE stream = ? AND gen = ?');
    const dropDone = sqlite.prepare('DELETE FROM staging_done WHERE stream = ? AND gen = ?');
    const { encode, decode } = stream;
    this.#logged = encode ? (items) => items.map((item) => encode.call(stream, item)) : (items) => items;
    this.#fromLog = decode ? (logged) => logged.map((raw) => decode.call(stream, raw)) : (logged) => logged as T[];
    this.#writeChunk = sqlite.transaction((gen: number, items: readonly T[]) => {
      stream.write(items);
      this.#markDone.run(stream.name, gen, stream.key(items[0] as T), stream.key(items[items.length - 1] as T));
    });
    this.#forget = sqlite.transaction((gen: number) => {
      dropLog.run(stream.name, gen);
      dropDone.run(stream.name, gen);
    });
    this.#recover();
  }

  /** Appends `items` to the log inside the caller's transaction; then `committed()` or `rolledBack()`. */
  stage(items: readonly T[]): void {
    if (items.length === 0) return;
    this.#append.run(this.#stream.name, this.#gen, JSON.stringify(this.#logged(items)));
    for (const item of items) this.#tentative.push(item);
  }

  /** The transaction that staged committed: its items join the open generation. */
  committed(): void {
    if (this.#tentative.length === 0) return;
    for (const item of this.#tentative) {
      this.#open.push(item);
      const key = this.#stream.key(item);
      this.#pendingKeys.set(key, (this.#pendingKeys.get(key) ?? 0) + 1);
    }
    this.#tentative = [];
    this.#schedule();
  }

  /** The transaction that staged rolled back: its items are not in the log. */
  rolledBack(): void {
    this.#tentative = [];
  }

  /** Stages `items` in a transaction of their own. Throws if it failed (nothing is staged then). */
  append(items: readonly T[]): void {
    try {
      this.#sqlite.transaction(() => this.stage(items))();
    } catch (err) {
      this.rolledBack();
      throw err;
    }
    this.committed();
  }

  /** Whether an item of `key` is staged and not yet written where it belongs. */
  hasPending(key: string): boolean {
    return this.#pendingKeys.has(key);
  }

  /** Resolves once everything staged so far is written where it belongs (in the lane, hurried). */
  async drain(): Promise<void> {
    this.#draining += 1;
    this.#lane.hurry();
    try {
      this.#rotate();
      while (this.#writing) await this.#writing;
    } finally {
      this.#draining -= 1;
    }
  }

  /** Writes everything staged where it belongs now, in this turn (for close, and a reload that must see it). */
  drainNow(): void {
    this.#rotate();
    while (this.#closed.length > 0) this.#writeNext(Number.POSITIVE_INFINITY);
  }

  /**
   * The open generation's end. Unreferenced: what it would write is in the log already, so it need not keep a
   * process alive (a process that ends without drain() leaves it to be written by the next one).
   */
  #schedule(): void {
    this.#timer ??= setTimeout(() => this.#rotate(), this.#generationMs).unref();
  }

  /** Closes the open generation and starts writing the closed ones, unless that is under way. */
  #rotate(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#open.length > 0) {
      const key = this.#stream.key.bind(this.#stream);
      const items = this.#open.sort((a, b) => cmp(key(a), key(b)));
      this.#closed.push({ gen: this.#gen, items, next: 0 });
      this.#open = [];
      this.#gen += 1;
    }
    if (this.#closed.length > 0 && !this.#writing) {
      this.#writing = this.#writeAll().finally(() => {
        this.#writing = undefined;
      });
    }
  }

  async #writeAll(): Promise<void> {
    while (this.#closed.length > 0) {
      await this.#lane.turn(this.#closed.length > 1 || this.#draining > 0);
      // drainNow() may have written everything while this waited for its turn.
      if (this.#closed.length === 0) return;
      try {
        this.#writeNext(this.#chunkSize());
      } catch (err) {
        // What is left stays staged (and in the log): tried again a generation later.
        this.#onError(err);
        this.#schedule();
        return;
      }
    }
  }

  /** Items for the next chunk: the option's, or as many as fit the budget at the cost measured so far. */
  #chunkSize(): number {
    if (this.#chunkItems !== undefined) return this.#chunkItems;
    if (this.#msPerItem === undefined) return MIN_CHUNK_ITEMS;
    const fit = Math.floor(CHUNK_BUDGET_MS / this.#msPerItem);
    return Math.min(MAX_CHUNK_ITEMS, Math.max(MIN_CHUNK_ITEMS, fit));
  }

  /** Writes the next chunk of the oldest closed generation (up to `max` items, a key's items together). */
  #writeNext(max: number): void {
    const generation = this.#closed[0];
    if (!generation) return;
    const { items } = generation;
    if (generation.next < items.length) {
      let end = Math.min(items.length, generation.next + max);
      const key = (i: number) => this.#stream.key(items[i] as T);
      while (end < items.length && key(end) === key(end - 1)) end++;
      const chunk = items.slice(generation.next, end);
      const started = performance.now();
      this.#writeChunk(generation.gen, chunk);
      const perItem = (performance.now() - started) / chunk.length;
      this.#msPerItem =
        this.#msPerItem === undefined ? perItem : this.#msPerItem + COST_WEIGHT * (perItem - this.#msPerItem);
      generation.next = end;
      for (const item of chunk) {
        const k = this.#stream.key(item);
        const left = (this.#pendingKeys.get(k) ?? 1) - 1;
        if (left === 0) this.#pendingKeys.delete(k);
        else this.#pendingKeys.set(k, left);
      }
      if (end < items.length) return;
    }
    this.#forget(generation.gen);
    this.#closed.shift();
  }

  /** What an earlier process staged and did not write: written now, the log emptied. */
  #recover(): void {
    const rows = this.#sqlite
      .prepare('SELECT gen, body FROM staging_log WHERE stream = ? ORDER BY seq')
      .all(this.#stream.name) as Array<{ gen: number; body: string }>;
    if (rows.length === 0) return;
    const done = this.#sqlite
      .prepare('SELECT gen, first_key, last_key FROM staging_done WHERE stream = ?')
      .all(this.#stream.name) as Array<{ gen: number; first_key: string; last_key: string }>;
    const left: T[] = [];
    for (const row of rows) {
      for (const item of this.#fromLog(JSON.parse(row.body) as unknown[])) {
        const k = this.#stream.key(item);
        if (!done.some((d) => d.gen === row.gen && d.first_key <= k && k <= d.last_key)) left.push(item);
      }
    }
    const key = this.#stream.key.bind(this.#stream);
    left.sort((a, b) => cmp(key(a), key(b)));
    this.#sqlite.transaction(() => {
      if (left.length > 0) this.#stream.write(left);
      this.#sqlite.prepare('DELETE FROM staging_log WHERE stream = ?').run(this.#stream.name);
      this.#sqlite.prepare('DELETE FROM staging_done WHERE stream = ?').run(this.#stream.name);
    })();
  }
}

const logs = new WeakMap<BetterSqlite3.Database, Map<string, StagingLog<unknown>>>();

/**
 * The staging log of a connection's stream: one per connection and stream name, however many stores use it
 * (two would each recover, and write, the other's items). Only a process that owns the database makes one.
 */
export function stagingLogOf<T>(
  sqlite: BetterSqlite3.Database,
  stream: StagedStream<T>,
  options: StagingLogOptions = {},
): StagingLog<T> {
  let byName = logs.get(sqlite);
  if (!byName) {
    byName = new Map();
    logs.set(sqlite, byName);
  }
  let log = byName.get(stream.name) as StagingLog<T> | undefined;
  if (!log) {
    log = new StagingLog(sqlite, stream, options);
    byName.set(stream.name, log as StagingLog<unknown>);
  }
  return log;
}
