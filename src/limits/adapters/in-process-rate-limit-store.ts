import { type TurnCommit, type TurnWriter, WriteBehindTimer } from '../../storage/index.js';
import type { AdmissionCounts, Limits, RateLimitStore } from '../types.js';
import { MINUTE_MS, utcDayStart, utcMonthStart } from '../windows.js';
import { MinuteLog } from './minute-log.js';

/** One account's windows as stored: the sliding minute's admission times and the period counters. */
export interface PersistedWindows {
  minute: number[];
  dayCount: number;
  monthCount: number;
}

/** What one flush writes for one account. */
export interface WindowsChange {
  accountId: string;
  /** New admission times since the last flush, or the whole log when `replaceLog` is set. */
  added: number[];
  replaceLog: boolean;
  dayStart: number;
  dayCount: number;
  monthStart: number;
  monthCount: number;
  /** A day or month began since the last flush: the finished periods' counters can go. */
  dropOlderPeriods: boolean;
}

/** Where the in-process store keeps its windows between runs. */
export interface WindowsPersistence {
  load(accountId: string, now: number, dayStart: number, monthStart: number): PersistedWindows;
  /** Writes every change atomically (one transaction). */
  save(changes: readonly WindowsChange[]): void;
  /** Writes every change inside the caller's transaction (the turn's). */
  write(changes: readonly WindowsChange[]): void;
  /** The transaction every store's writes of one event-loop turn go into. */
  readonly turnCommit: TurnCommit;
  /** Deletes each account's admission times at or before its cutoff (the minute has moved past them). */
  prune(cutoffs: ReadonlyMap<string, number>): void;
}

interface AccountWindows {
  log: MinuteLog;
  /** Entries of `log` already written; the rest are new. */
  persisted: number;
  /** An out-of-order admission (a clock that went back) rewrites the whole log on the next flush. */
  replaceLog: boolean;
  dayStart: number;
  dayCount: number;
  monthStart: number;
  monthCount: number;
  startedPeriod: boolean;
  dirty: boolean;
  lastUsed: number;
}

/**
 * Accounts whose old admission times one pruning write deletes: each is a range of its own in the b-tree
 * (~10 µs), so the 1,000 busy accounts of one pass, written at once, held the event loop 10-20 ms every 5 s.
 */
const PRUNE_CHUNK = 64;

export interface InProcessOptions {
  /** How often idle accounts leave memory and a failed write is tried again. */
  housekeepingIntervalMs?: number;
  /** Longest a pruned admission time stays stored (it is never counted: loads read the last minute only). */
  pruneIntervalMs?: number;
  onError?: (err: unknown) => void;
}

/**
 * Admission decided in memory, for a process that owns its database (embedded SQLite, held with
 * ProcessLock): no other process admits against the same windows, so this process's view is the whole
 * truth and deciding needs no storage round trip. Admissions are stored before the request goes on: those
 * of one event-loop turn are written in the turn's one transaction (storage's TurnCommit, shared with the
 * credit ledger's charges), and admit() resolves after it. So a crash forgets only admissions of requests that had not got past the
 * limiter yet, never one that was answered; a restart loads the windows back. If that write fails, the
 * limits still hold in this process (decisions are in memory) and the write is retried.
 */
export class InProcessRateLimitStore implements RateLimitStore, TurnWriter {
  readonly #persistence: WindowsPersistence;
  readonly #accounts = new Map<string, AccountWindows>();
  /** Accounts with changes not yet written. */
  readonly #dirty = new Map<string, AccountWindows>();
  /**
   * Per account, the time through which its stored admission times can go. Written every `pruneIntervalMs`,
   * not with each admission: a stored time older than the minute is never read back (load() reads the last
   * minute), so deleting it is housekeeping, and doing it per admission was one statement in four.
   */
  #prunes = new Map<string, number>();
  readonly #pruning: WriteBehindTimer;
  /** The next chunk of prunes, one event-loop turn later. */
  #pruneTurn: NodeJS.Immediate | undefined;
  readonly #commit: TurnCommit;
  readonly #housekeeping: WriteBehindTimer;
  readonly #onError: (err: unknown) => void;
  /** Settles after the commit of the current turn; every admission of the turn waits for it. */
  #turn: { stored: Promise<void>; resolve(): void } | undefined;

  constructor(persistence: WindowsPersistence, options: InProcessOptions = {}) {
    this.#persistence = persistence;
    this.#onError = options.onError ?? (() => undefined);
    this.#commit = persistence.turnCommit;
    this.#housekeeping = new WriteBehindTimer(
      () => {
        this.flush();
        this.#evictIdle();
      },
      options.housekeepingIntervalMs ?? 200,
      this.#onError,
    );
    this.#pruning = new WriteBehindTimer(() => this.#writePrunes(), options.pruneIntervalMs ?? 5000, this.#onError);
  }

  /** Decided synchronously; an admission resolves once it is stored (at the end of this event-loop turn). */
  admit(accountId: string, limits: Limits, now: number): Promise<AdmissionCounts> {
    const counts = this.#count(accountId, limits, now, true);
    if (!counts.admitted) return Promise.resolve(counts);
    if (!this.#turn) {
      let resolve!: () => void;
      const stored = new Promise<void>((r) => {
        resolve = r;
      });
      this.#turn = { stored, resolve };
      this.#commit.schedule(this);
    }
    return this.#turn.stored.then(() => counts);
  }

  async peek(accountId: string, limits: Limits, now: number): Promise<AdmissionCounts> {
    return this.#count(accountId, limits, now, false);
  }

  #count(accountId: string, limits: Limits, now: number, consume: boolean): AdmissionCounts {
    const w = this.#windows(accountId, now);
    const cutoff = now - MINUTE_MS;
    if (consume) {
      const pruned = w.log.pruneThrough(cutoff);
      if (pruned > 0) {
        w.persisted = Math.max(0, w.persisted - pruned);
        this.#prunes.set(accountId, cutoff);
        this.#pruning.schedule();
      }
    }
    const minuteCount = w.log.countAfter(cutoff);
    const minuteOldest = w.log.oldestAfter(cutoff);
    const admitted = minuteCount < limits.rpm && w.dayCount < limits.rpd && w.monthCount < limits.monthly;
    const counts = { admitted, minuteCount, minuteOldest, dayCount: w.dayCount, monthCount: w.monthCount };
    if (admitted && consume) {
      if (!w.log.append(now)) w.replaceLog = true;
      w.dayCount += 1;
      w.monthCount += 1;
      w.lastUsed = now;
      this.#markDirty(accountId, w);
      this.#housekeeping.schedule();
    }
    return counts;
  }

  /** Writes every pending change now, in one transaction. Throws if it failed (the changes stay pending). */
  flush(): void {
    if (this.#dirty.size === 0) return;
    this.#persistence.save(this.#changes());
    this.#written();
  }

  /** The turn's part: every pending change, inside the turn's transaction. */
  writeTurn(): void {
    if (this.#dirty.size > 0) this.#persistence.write(this.#changes());
  }

  /** The turn's admissions are stored: they go on. */
  turnStored(): void {
    this.#written();
    this.#settleTurn();
  }

  /** The limits still hold in memory, and housekeeping writes the windows again; the admissions go on. */
  turnFailed(err: unknown): void {
    this.#onError(err);
    this.#housekeeping.schedule();
    this.#settleTurn();
  }

  #changes(): WindowsChange[] {
    const changes: WindowsChange[] = [];
    for (const [accountId, w] of this.#dirty) {
      changes.push({
        accountId,
        added: w.replaceLog ? w.log.toArray() : w.log.toArray(w.persisted),
        replaceLog: w.replaceLog,
        dayStart: w.dayStart,
        dayCount: w.dayCount,
        monthStart: w.monthStart,
        monthCount: w.monthCount,
        dropOlderPeriods: w.startedPeriod,
      });
    }
    return changes;
  }

  /** What was dirty is stored (nothing ran between building the changes and writing them). */
  #written(): void {
    for (const w of this.#dirty.values()) {
      w.dirty = false;
      w.replaceLog = false;
      w.startedPeriod = false;
      w.persisted = w.log.size;
    }
    this.#dirty.clear();
  }

  #settleTurn(): void {
    const turn = this.#turn;
    this.#turn = undefined;
    turn?.resolve();
  }

  async close(): Promise<void> {
    this.#commit.withdraw(this);
    this.#housekeeping.cancel();
    this.#pruning.cancel();
    if (this.#pruneTurn) clearImmediate(this.#pruneTurn);
    try {
      this.flush();
      this.#writePrunes(true);
    } finally {
      this.#turn?.resolve();
      this.#turn = undefined;
    }
  }

  /**
   * Deletes the stored times the minute has moved past, PRUNE_CHUNK accounts per event-loop turn (every one
   * of them on close); a chunk whose write failed is kept for the next pass.
   */
  #writePrunes(all = false): void {
    this.#pruneTurn = undefined;
    while (this.#prunes.size > 0) {
      const chunk = new Map<string, number>();
      for (const [id, cutoff] of this.#prunes) {
        chunk.set(id, cutoff);
        this.#prunes.delete(id);
        if (chunk.size === PRUNE_CHUNK) break;
      }
      try {
        this.#persistence.prune(chunk);
      } catch (err) {
        for (const [id, cutoff] of chunk) if (!this.#prunes.has(id)) this.#prunes.set(id, cutoff);
        this.#pruning.schedule();
        throw err;
      }
      if (!all) {
        if (this.#prunes.size > 0) this.#pruneTurn = setImmediate(() => this.#writeMorePrunes());
        return;
      }
    }
  }

  #writeMorePrunes(): void {
    try {
      this.#writePrunes();
    } catch (err) {
      this.#onError(err);
    }
  }

  #markDirty(accountId: string, w: AccountWindows): void {
    w.dirty = true;
    this.#dirty.set(accountId, w);
  }

  /** Accounts without an admission in the last minute are reloaded from storage when next seen. */
  #evictIdle(): void {
    let newest = 0;
    for (const w of this.#accounts.values()) newest = Math.max(newest, w.lastUsed);
    for (const [id, w] of this.#accounts) {
      if (!w.dirty && w.lastUsed <= newest - MINUTE_MS) this.#accounts.delete(id);
    }
  }

  #windows(accountId: string, now: number): AccountWindows {
    const dayStart = utcDayStart(now);
    const monthStart = utcMonthStart(now);
    let w = this.#accounts.get(accountId);
    if (w && (w.dayStart !== dayStart || w.monthStart !== monthStart)) {
      // A new day or month (or a clock that moved back): write what we have, then read the new periods.
      this.flush();
      this.#accounts.delete(accountId);
      w = undefined;
    }
    if (!w) {
      const stored = this.#persistence.load(accountId, now, dayStart, monthStart);
      const log = new MinuteLog(stored.minute);
      w = {
        log,
        persisted: log.size,
        replaceLog: false,
        dayStart,
        dayCount: stored.dayCount,
        monthStart,
        monthCount: stored.monthCount,
        startedPeriod: stored.dayCount === 0 || stored.monthCount === 0,
        dirty: false,
        lastUsed: now,
      };
      this.#accounts.set(accountId, w);
    }
    return w;
  }
}
