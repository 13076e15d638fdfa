import { AppError } from '../errors/index.js';
import { SlotList } from '../kernel/index.js';

/**
 * The process's stop as requests see it, in two steps. `drain()`: readiness answers 503 so load
 * balancers stop sending (the server also stops accepting connections and closes each one after its
 * answer: src/server.ts). `endWork()`, when the grace period is over: every request's work follows its
 * stop callback (`follow`) with a 503 AppError, so what is still in flight ends now: a stream with a final
 * error event, any other request with that 503 (after the refund of a chat that had not started its answer).
 *
 * The callbacks are slots of a SlotList, not listeners of an AbortSignal: a removed listener keeps its link
 * to the next one, and that link kept every later request's objects through their scavenges
 * (kernel/slot-list.ts says how, with the numbers).
 */
export class Lifecycle {
  readonly #followers = new SlotList<(reason: unknown) => void>();
  #draining = false;
  #reason: AppError | undefined;

  get draining(): boolean {
    return this.#draining;
  }

  /** Whether endWork() was called; `reason` is then the error to answer. */
  get stopped(): boolean {
    return this.#reason !== undefined;
  }

  get reason(): AppError | undefined {
    return this.#reason;
  }

  /** Calls `stop(reason)` at endWork(); answers the ticket that `unfollow` takes back (once). */
  follow(stop: (reason: unknown) => void): number {
    return this.#followers.add(stop);
  }

  unfollow(ticket: number): void {
    this.#followers.delete(ticket);
  }

  drain(): void {
    this.#draining = true;
  }

  endWork(): void {
    this.#draining = true;
    if (this.#reason) return;
    const reason = new AppError('SERVICE_UNAVAILABLE', 'The server is stopping; send the request again');
    this.#reason = reason;
    for (const stop of this.#followers) stop(reason);
  }
}
