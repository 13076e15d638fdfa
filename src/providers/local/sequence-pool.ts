import { abortReason, ProviderError } from '../types.js';

/**
 * A fixed set of resources (context sequences) handed out one request at a time, with a bounded
 * FIFO wait list. A full wait list fails fast with ProviderError 'busy' (the HTTP layer answers 503)
 * rather than letting latency grow without bound.
 */
export class SequencePool<T> {
  private readonly free: T[];
  private readonly waiters: Array<{ resolve: (item: T) => void; reject: (err: unknown) => void }> = [];
  private closed = false;
  /** Items in the pool, free or lent. */
  readonly size: number;
  /** Told after each change of what is lent or waiting: the engine's thread mirrors it for the main thread. */
  onChange: ((active: number, queued: number) => void) | undefined;

  constructor(
    items: readonly T[],
    private readonly maxQueue: number,
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
    return {
      item,
      release: () => {
        if (released) return;
        released = true;
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

  private wait(signal: AbortSignal): Promise<T> {
    if (this.waiters.length >= this.maxQueue) {
      return Promise.reject(
        new ProviderError('busy', `local engine busy: all sequences in use and ${this.maxQueue} requests queued`, {
          retryable: true,
        }),
      );
    }
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        this.changed();
        reject(abortReason(signal));
      };
      const waiter = {
        resolve: (item: T) => {
          signal.removeEventListener('abort', onAbort);
          resolve(item);
        },
        reject: (err: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
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
