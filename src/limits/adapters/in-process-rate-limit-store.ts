import { backgroundLane, type TurnCommit, type TurnWriter, WriteBehindTimer } from '../../storage/index.js';
import { admits, minuteCutoff } from '../admission-rule.js';
import type { AdmissionCounts, Limits, RateLimitStore } from '../types.js';
import { MINUTE_MS, utcDayStart, utcMonthStart } from '../windows.js';
import { MinuteLog } from './minute-log.js';

/** One account's windows as stored: the sliding minute's admission times and the period counters. */
export interface PersistedWindows {
  minute: number[];
  dayCount: number;
  monthCount: number;
}

/** One admission: the account and its time (ms). */
export type Admission = readonly [accountId: string, at: number];

/** Where the in-process store keeps its windows between runs. */
export interface WindowsPersistence {
  /** The account's stored windows, with every admission staged for it. */
  load(accountId: string, now: number, dayStart: number, monthStart: number): PersistedWindows;
  /** Stages admissions inside the caller's transaction (the turn's); then `committed()` or `rolledBack()`. */
  stage(admissions: readonly Admission[]): void;
  committed(): void;
  rolledBack(): void;
  /** Stages admissions in a transaction of their own. Throws if it failed. */
  append(admissions: readonly Admission[]): void;
  /** Writes every staged admission where it belongs now. */
  drainNow(): void;
  /** The transaction every store's writes of one event-loop turn go into. */
  readonly turnCommit: TurnCommit;
  /** Deletes each account's admission times at or before its cutoff (the minute has moved past them). */
  prune(cutoffs: ReadonlyMap<string, number>): void;
  /** Deletes each account's counters of days before its day and months before its month. */
  dropOlderPeriods(periods: ReadonlyMap<string, readonly [dayStart: number, monthStart: number]>): void;
}

interface AccountWindows {
  log: MinuteLog;
  dayStart: number;
  dayCount: number;
  monthStart: number;
  monthCount: number;
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
 * of one event-loop turn are staged in the turn's one transaction (storage's TurnCommit, shared with the
 * credit ledger's charges; the admissions go to the staging log, one row for the turn, and from there to
 * their tables a second later), and admit() resolves after it. So a crash forgets only admissions of
 * requests that had not got past the limiter yet, never one that was answered; a restart writes what was
 * staged and loads the windows back. If that write fails, the limits still hold in this process
 * (decisions are in memory) and the admissions are staged again with the next commit.
 */
export class InProcessRateLimitStore implements RateLimitStore, TurnWriter {
  readonly #persistence: WindowsPersistence;
  readonly #accounts = new Map<string, AccountWindows>();
  /** Admissions decided and not yet staged (this turn's, and a failed turn's). */
  #unstaged: Admission[] = [];
  /** Staged by the turn's transaction under way. */
  #staging: Admission[] = [];
  /**
   * Per account, the time through which its stored admission times can go. Written every `pruneIntervalMs`,
   * not with each admission: a stored time older than the minute is never read back (load() reads the last
   * minute), so deleting it is housekeeping.
   */
  #prunes = new Map<string, number>();
  /** Accounts that started a day or a month: their finished periods' counters can go. */
  #startedPeriods = new Map<string, readonly [number, number]>();
  readonly #pruning: WriteBehindTimer;
  /** The next chunk of prunes waits for its turn in the background lane. */
  #pruneQueued = false;
  #closed = false;
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
        if (this.#unstaged.length > 0) this.#commit.schedule(this);
        this.#evictIdle();
      },
      options.housekeepingIntervalMs ?? 200,
      this.#onError,
    );
    this.#pruning = new WriteBehindTimer(() => this.#queuePrunes(), options.pruneIntervalMs ?? 5000);
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
    const cutoff = minuteCutoff(now);
    if (consume && w.log.pruneThrough(cutoff) > 0) {
      this.#prunes.set(accountId, cutoff);
      this.#pruning.schedule();
    }
    const minuteCount = w.log.countAfter(cutoff);
    const minuteOldest = w.log.oldestAfter(cutoff);
    const counts = { admitted: false, minuteCount, minuteOldest, dayCount: w.dayCount, monthCount: w.monthCount };
    counts.admitted = admits(counts, limits);
    if (counts.admitted && consume) {
      w.log.append(now);
      w.dayCount += 1;
      w.monthCount += 1;
      w.lastUsed = now;
      this.#unstaged.push([accountId, now]);
      this.#housekeeping.schedule();
    }
    return counts;
  }

  /** Stages what is decided and writes everything staged where it belongs, now. Throws if it failed. */
  flush(): void {
    this.#stageNow();
    this.#persistence.drainNow();
  }

  /** The turn's part: its admissions (and any a failed turn left), staged inside the turn's transaction. */
  writeTurn(): void {
    if (this.#unstaged.length === 0) return;
    this.#staging = this.#unstaged;
    this.#unstaged = [];
    this.#persistence.stage(this.#staging);
  }

  /** The turn's admissions are stored: they go on. */
  turnStored(): void {
    this.#staging = [];
    this.#persistence.committed();
    this.#settleTurn();
  }

  /** The limits still hold in memory, and the admissions are staged again later; they go on. */
  turnFailed(err: unknown): void {
    this.#persistence.rolledBack();
    this.#unstaged = this.#staging.concat(this.#unstaged);
    this.#staging = [];
    this.#onError(err);
    this.#housekeeping.schedule();
    this.#settleTurn();
  }

  /** Stages what is decided in a transaction of its own (the turn's commit then finds nothing of ours). */
  #stageNow(): void {
    if (this.#unstaged.length === 0) return;
    this.#persistence.append(this.#unstaged);
    this.#unstaged = [];
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
    this.#closed = true;
    try {
      this.flush();
      this.#writePrunes(true);
    } finally {
      this.#settleTurn();
    }
  }

  /**
   * Deletes the counters of the days and months accounts have finished, and the stored times the minute has
   * moved past, PRUNE_CHUNK accounts a turn of the background lane (every one of them on close); a chunk whose write
   * failed is kept for the next pass.
   */
  #writePrunes(all = false): void {
    if (this.#startedPeriods.size > 0) {
      const started = this.#startedPeriods;
      this.#startedPeriods = new Map();
      this.#persistence.dropOlderPeriods(started);
    }
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
        if (this.#prunes.size > 0) this.#queuePrunes();
        return;
      }
    }
  }

  /** The next chunk of the pass (the first one too) is written in a slice of the background lane. */
  #queuePrunes(): void {
    if (this.#pruneQueued) return;
    this.#pruneQueued = true;
    void backgroundLane.turn().then(() => {
      this.#pruneQueued = false;
      if (!this.#closed) this.#writeMorePrunes();
    });
  }

  #writeMorePrunes(): void {
    try {
      this.#writePrunes();
    } catch (err) {
      this.#onError(err);
    }
  }

  /** Accounts without an admission in the last minute are reloaded from storage when next seen. */
  #evictIdle(): void {
    // A write is failing: what is not staged yet is known only here, so nothing leaves memory.
    if (this.#unstaged.length > 0) return;
    let newest = 0;
    for (const w of this.#accounts.values()) newest = Math.max(newest, w.lastUsed);
    for (const [id, w] of this.#accounts) {
      if (w.lastUsed <= newest - MINUTE_MS) this.#accounts.delete(id);
    }
  }

  #windows(accountId: string, now: number): AccountWindows {
    const dayStart = utcDayStart(now);
    const monthStart = utcMonthStart(now);
    let w = this.#accounts.get(accountId);
    if (w && (w.dayStart !== dayStart || w.monthStart !== monthStart)) {
      // A new day or month (or a clock that moved back): what was decided is staged first, so the new
      // periods are read with it (load() writes what is staged for the account before it reads).
      this.#stageNow();
      this.#accounts.delete(accountId);
      w = undefined;
    }
    if (!w) {
      const stored = this.#persistence.load(accountId, now, dayStart, monthStart);
      if (stored.dayCount === 0 || stored.monthCount === 0) {
        this.#startedPeriods.set(accountId, [dayStart, monthStart]);
        this.#pruning.schedule();
      }
      w = {
        log: new MinuteLog(stored.minute),
        dayStart,
        dayCount: stored.dayCount,
        monthStart,
        monthCount: stored.monthCount,
        lastUsed: now,
      };
      this.#accounts.set(accountId, w);
    }
    return w;
  }
}
