import { AppError } from '../errors/index.js';

/** Gives back the slot taken by `acquire`; calling it more than once is harmless. */
export type ReleaseSlot = () => void;

export interface FairQueueLimits {
  /** Slots, server-wide. */
  maxConcurrent: number;
  /** Callers waiting, server-wide; beyond that SERVER_BUSY. */
  maxQueue: number;
  /** Slots one account may hold at once. */
  maxConcurrentPerAccount: number;
  /** Callers of one account waiting; beyond that ACCOUNT_BUSY. */
  maxQueuePerAccount: number;
}

interface Waiter {
  grant: (release: ReleaseSlot) => void;
}

/** One account's share: how many of its executions run, and its own FIFO line. */
interface AccountLine {
  running: number;
  waiting: Waiter[];
}

/**
 * Admission to code execution, shared fairly between accounts.
 *
 * - At most `maxConcurrent` run server-wide, and at most `maxConcurrentPerAccount` per account. The per-account
 *   cap holds even when the other slots are idle: it is what keeps a slot free for the next account, since a
 *   running execution cannot be preempted (one enterprise call may hold its slot for 120 s).
 * - Each account waits in its own FIFO line. A freed slot goes to the next account in round-robin order that
 *   is under its cap, so one account's backlog delays another account by at most one turn, not by its length.
 * - Refusals are immediate, never a wait: ACCOUNT_BUSY when the caller's own line is full (its share, not the
 *   server, is the limit), SERVER_BUSY when the server-wide line is full.
 */
export class FairQueue {
  private active = 0;
  private queued = 0;
  private readonly lines = new Map<string, AccountLine>();
  /** Accounts with someone waiting, in turn order: the first one under its cap is served next. */
  private readonly turns = new Set<string>();

  constructor(private readonly limits: FairQueueLimits) {}

  get activeCount(): number {
    return this.active;
  }

  get queuedCount(): number {
    return this.queued;
  }

  /** Resolves with a release function once the account may run; an abort while waiting leaves the line. */
  acquire(accountId: string, signal?: AbortSignal): Promise<ReleaseSlot> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    const line = this.lineOf(accountId);
    if (line.waiting.length === 0 && line.running < this.limits.maxConcurrentPerAccount) {
      if (this.active < this.limits.maxConcurrent) return Promise.resolve(this.start(accountId, line));
    }
    const refusal = this.refusal(line);
    if (refusal !== null) {
      this.forgetIfIdle(accountId, line);
      return Promise.reject(refusal);
    }
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = (): void => {
        const index = line.waiting.indexOf(waiter);
        if (index !== -1) {
          line.waiting.splice(index, 1);
          this.queued -= 1;
          if (line.waiting.length === 0) this.turns.delete(accountId);
          this.forgetIfIdle(accountId, line);
        }
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      line.waiting.push(waiter);
      this.queued += 1;
      this.turns.add(accountId);
    });
  }

  /** Why a caller who cannot start at once may not wait either, or null when it may. */
  private refusal(line: AccountLine): AppError | null {
    const { maxConcurrent, maxQueue, maxConcurrentPerAccount, maxQueuePerAccount } = this.limits;
    const ownLineFull = line.waiting.length >= maxQueuePerAccount;
    // The caller's own share is what stops it only if its own executions fill it; an account with nothing
    // waiting and a free slot of its own is stopped by the server being full (possible with maxQueuePerAccount 0).
    if (ownLineFull && (line.waiting.length > 0 || line.running >= maxConcurrentPerAccount)) {
      return new AppError(
        'ACCOUNT_BUSY',
        `Your account's share of code execution is full: ${line.running} of your executions are running ` +
          `(at most ${maxConcurrentPerAccount} at once) and ${line.waiting.length} are waiting ` +
          `(at most ${maxQueuePerAccount}); retry when one of them has finished`,
        {
          running: line.running,
          queued: line.waiting.length,
          max_running: maxConcurrentPerAccount,
          max_queued: maxQueuePerAccount,
        },
      );
    }
    if (ownLineFull || this.queued >= maxQueue) {
      return new AppError(
        'SERVER_BUSY',
        `Code execution is at capacity (${maxConcurrent} running, ${this.queued} queued); retry later`,
      );
    }
    return null;
  }

  private start(accountId: string, line: AccountLine): ReleaseSlot {
    this.active += 1;
    line.running += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active -= 1;
      line.running -= 1;
      this.forgetIfIdle(accountId, line);
      this.dispatch();
    };
  }

  /** Hands free slots to waiting accounts, one per account per round. */
  private dispatch(): void {
    while (this.active < this.limits.maxConcurrent) {
      let next: string | undefined;
      for (const accountId of this.turns) {
        const candidate = this.lines.get(accountId);
        if (candidate !== undefined && candidate.running < this.limits.maxConcurrentPerAccount) {
          next = accountId;
          break;
        }
      }
      if (next === undefined) return;
      const line = this.lines.get(next);
      const waiter = line?.waiting.shift();
      if (line === undefined || waiter === undefined) {
        this.turns.delete(next);
        continue;
      }
      this.queued -= 1;
      // Served: to the back of the round (or out of it when nothing else of theirs waits).
      this.turns.delete(next);
      if (line.waiting.length > 0) this.turns.add(next);
      waiter.grant(this.start(next, line));
    }
  }

  private lineOf(accountId: string): AccountLine {
    let line = this.lines.get(accountId);
    if (line === undefined) {
      line = { running: 0, waiting: [] };
      this.lines.set(accountId, line);
    }
    return line;
  }

  /** Drops an account's bookkeeping once it has nothing running or waiting, so the map stays small. */
  private forgetIfIdle(accountId: string, line: AccountLine): void {
    if (line.running === 0 && line.waiting.length === 0) this.lines.delete(accountId);
  }
}
