import { AppError } from '../errors/index.js';

/** Gives back the slot taken by `acquire`; calling it more than once is harmless. */
export type ReleaseSlot = () => void;

interface Waiter {
  grant: (release: ReleaseSlot) => void;
  fail: (reason: unknown) => void;
}

/**
 * At most `maxConcurrent` holders at once and a FIFO line of at most `maxQueue` waiting; anyone
 * beyond that is turned away at once with SERVER_BUSY, so overload never piles up unbounded work.
 */
export class ConcurrencyLimiter {
  private active = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly maxConcurrent: number,
    private readonly maxQueue: number,
  ) {}

  get activeCount(): number {
    return this.active;
  }

  get queuedCount(): number {
    return this.waiting.length;
  }

  /** Resolves with a release function once a slot is free; an abort while waiting leaves the line. */
  acquire(signal?: AbortSignal): Promise<ReleaseSlot> {
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    if (this.active < this.maxConcurrent && this.waiting.length === 0) {
      this.active += 1;
      return Promise.resolve(this.releaser());
    }
    if (this.waiting.length >= this.maxQueue) {
      return Promise.reject(
        new AppError(
          'SERVER_BUSY',
          `Code execution is at capacity (${this.maxConcurrent} running, ${this.waiting.length} queued); retry later`,
        ),
      );
    }
    return new Promise<ReleaseSlot>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.waiting.indexOf(waiter);
        if (index !== -1) this.waiting.splice(index, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
        fail: reject,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private releaser(): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // Hand the slot straight to the next in line; `active` stays the same.
      if (next !== undefined) next.grant(this.releaser());
      else this.active -= 1;
    };
  }
}
