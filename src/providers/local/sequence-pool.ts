import { abortReason, ProviderError } from '../types.js';

/** How long the pool lets a request wait, and how many may. */
export interface WaitBounds {
  /** Requests allowed to wait; one more fails at once with 'busy'. */
  maxQueue: number;
  /** How long one may wait before it fails with 'busy' (0: as long as it takes). */
  maxWaitMs: number;
}

/** What a lease lasted, on average, before any was measured: a short answer of a small model. */
const FIRST_LEASE_MS = 2000;
/** Weight of the latest lease in the running mean (an exponential moving average over ~10 leases). */
const LEASE_WEIGHT = 0.1;

/**
 * A fixed set of resources (context sequences) handed out one request at a time, with a FIFO wait list bounded
 * in length and in time. A request past either bound fails with ProviderError 'busy' (the HTTP layer answers 503
 * with `Retry-After`) rather than letting latency grow without bound; `Retry-After` is when a sequence should be
 * free for it: the running mean of how long a lease lasts, times the queue ahead of it, over the sequences.
 */
export class SequencePool<T> {
  private readonly free: T[];
  private readonly waiters: Array<{ resolve: (item: T) => void; reject: (err: unknown) => void }> = [];
  private closed = false;
  private meanLeaseMs = FIRST_LEASE_MS;
  /** Items in the pool, free or lent. */
  readonly size: number;
  /** Told after each change of what is lent or waiting: the engine's process reports it to the server. */
  onChange: ((active: number, queued: number) => void) | undefined;

  constructor(
    items: readonly T[],
    private readonly bounds: WaitBounds,
  ) {
    this.free = [...items];
    this.size = items.length;
  }

  /** Requests currently waiting for a sequence. */
  get queued(): number {
    return this.waiters.length;
  }

  get available(): number {
    return this.free.length;
  }

  /**
   * Takes a free item (preferring the best `score`, e.g. the longest reusable prompt prefix) or waits for one.
   * The returned release function must be called exactly once.
   */
  async acquire(signal: AbortSignal, score?: (item: T) => number): Promise<{ item: T; release: () => void }> {
    if (signal.aborted) throw abortReason(signal);
    if (this.closed) throw new ProviderError('upstream', 'local engine is closed', { retryable: true });
    const item = this.free.length > 0 ? this.takeBest(score) : await this.wait(signal);
    this.changed();
    let released = false;
    const leased = performance.now();
    return {
      item,
      release: () => {
        if (released) return;
        released = true;
        this.meanLeaseMs += LEASE_WEIGHT * (performance.now() - leased - this.meanLeaseMs);
        this.giveBack(item);
      },
    };
  }

  /** Fails everyone still waiting; used on shutdown. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) {
      waiter.reject(new ProviderError('upstream', 'local engine is closing', { retryable: true }));
    }
    this.changed();
  }

  private changed(): void {
    this.onChange?.(this.size - this.free.length, this.waiters.length);
  }

  private takeBest(score: ((item: T) => number) | undefined): T {
    let bestIndex = 0;
    if (score && this.free.length > 1) {
      let bestScore = Number.NEGATIVE_INFINITY;
      this.free.forEach((item, index) => {
        const value = score(item);
        if (value > bestScore) {
          bestScore = value;
          bestIndex = index;
        }
      });
    }
    const [item] = this.free.splice(bestIndex, 1);
    if (item === undefined) throw new Error('SequencePool invariant: no free item');
    return item;
  }

  /** When a request that joins the queue now should find a sequence free: ms, at least a second. */
  retryAfterMs(): number {
    const ahead = this.waiters.length + 1;
    return Math.max(1000, Math.ceil((this.meanLeaseMs * ahead) / this.size / 1000) * 1000);
  }

  private busy(why: string): ProviderError {
    return new ProviderError('busy', `local engine busy: ${why}`, {
      retryable: true,
      retryAfterMs: this.retryAfterMs(),
    });
  }

  private wait(signal: AbortSignal): Promise<T> {
    const { maxQueue, maxWaitMs } = this.bounds;
    if (this.waiters.length >= maxQueue) {
      return Promise.reject(this.busy(`all sequences in use and ${maxQueue} requests queued`));
    }
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        this.changed();
      };
      const onAbort = (): void => {
        clearTimeout(timer);
        leave();
        reject(abortReason(signal));
      };
      const waiter = {
        resolve: (item: T) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(item);
        },
        reject: (err: unknown) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      if (maxWaitMs > 0) {
        timer = setTimeout(() => {
          leave();
          waiter.reject(this.busy(`no sequence came free within ${maxWaitMs} ms`));
        }, maxWaitMs);
      }
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
      this.changed();
    });
  }

  private giveBack(item: T): void {
    const next = this.waiters.shift();
    if (next) next.resolve(item);
    else this.free.push(item);
    this.changed();
  }
}
