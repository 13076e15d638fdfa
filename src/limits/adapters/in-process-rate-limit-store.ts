import { WriteBehindTimer } from '../../storage/index.js';
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
  /** Admission times to delete: everything at or before this time (the minute has moved past them). */
  prunedThrough: number | null;
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
}

interface AccountWindows {
  log: MinuteLog;
  /** Entries of `log` already written; the rest are new. */
  persisted: number;
  /** An out-of-order admission (a clock that went back) rewrites the whole log on the next flush. */
  replaceLog: boolean;
  prunedThrough: number | null;
  dayStart: number;
  dayCount: number;
  monthStart: number;
  monthCount: number;
  startedPeriod: boolean;
  dirty: boolean;
  lastUsed: number;
}

export interface InProcessOptions {
  /** How long admissions wait before they are written (what a crash can lose). */
  flushIntervalMs?: number;
  onError?: (err: unknown) => void;
}

/**
 * Admission decided in memory, for a process that owns its database (embedded SQLite, held with
 * ProcessLock): no other process admits against the same windows, so this process's view is the whole
 * truth and deciding needs no storage round trip. The windows are written behind, every
 * `flushIntervalMs`, in one transaction; a restart loads them back. Exactness within the process is
 * trivial (decisions are synchronous); a crash can lose the last interval's admissions.
 */
export class InProcessRateLimitStore implements RateLimitStore {
  readonly #persistence: WindowsPersistence;
  readonly #accounts = new Map<string, AccountWindows>();
  readonly #writes: WriteBehindTimer;

  constructor(persistence: WindowsPersistence, options: InProcessOptions = {}) {
    this.#persistence = persistence;
    // A failed write keeps the windows dirty in memory; the next admission's write retries it.
    this.#writes = new WriteBehindTimer(
      () => {
        this.flush();
        this.#evictIdle();
      },
      options.flushIntervalMs ?? 200,
      options.onError,
    );
  }

  /** Decided synchronously; async only because the port is. */
  admit(accountId: string, limits: Limits, now: number): Promise<AdmissionCounts> {
    return this.#count(accountId, limits, now, true);
  }

  peek(accountId: string, limits: Limits, now: number): Promise<AdmissionCounts> {
    return this.#count(accountId, limits, now, false);
  }

  async #count(accountId: string, limits: Limits, now: number, consume: boolean): Promise<AdmissionCounts> {
    const w = this.#windows(accountId, now);
    const cutoff = now - MINUTE_MS;
    if (consume) {
      const pruned = w.log.pruneThrough(cutoff);
      if (pruned > 0) {
        w.persisted = Math.max(0, w.persisted - pruned);
        w.prunedThrough = cutoff;
        w.dirty = true;
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
      w.dirty = true;
      w.lastUsed = now;
      this.#writes.schedule();
    }
    return counts;
  }

  /** Writes every pending change now. */
  flush(): void {
    this.#writes.cancel();
    const changes: WindowsChange[] = [];
    const written: AccountWindows[] = [];
    for (const [accountId, w] of this.#accounts) {
      if (!w.dirty) continue;
      changes.push({
        accountId,
        prunedThrough: w.prunedThrough,
        added: w.replaceLog ? w.log.toArray() : w.log.toArray(w.persisted),
        replaceLog: w.replaceLog,
        dayStart: w.dayStart,
        dayCount: w.dayCount,
        monthStart: w.monthStart,
        monthCount: w.monthCount,
        dropOlderPeriods: w.startedPeriod,
      });
      written.push(w);
    }
    if (changes.length > 0) this.#persistence.save(changes);
    for (const w of written) {
      w.dirty = false;
      w.replaceLog = false;
      w.prunedThrough = null;
      w.startedPeriod = false;
      w.persisted = w.log.size;
    }
  }

  async close(): Promise<void> {
    this.flush();
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
        prunedThrough: null,
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
