import { setMaxListeners } from 'node:events';
import { AppError } from '../errors/index.js';

/**
 * The process's stop as requests see it, in two steps. `drain()`: readiness answers 503 so load
 * balancers stop sending (the server also stops accepting connections and closes each one after its
 * answer: src/server.ts). `endWork()`, when the grace period is over: `signal` aborts with a 503
 * AppError, and every request's work signal follows it, so what is still in flight ends now: a stream
 * with a final error event, any other request with that 503 (after the refund of a chat that had not
 * started its answer).
 */
export class Lifecycle {
  readonly #stop = new AbortController();
  #draining = false;

  constructor() {
    // One listener per request in flight: many, on purpose.
    setMaxListeners(0, this.#stop.signal);
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Aborted by endWork(); its reason is the error to answer. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  drain(): void {
    this.#draining = true;
  }

  endWork(): void {
    this.#draining = true;
    if (!this.#stop.signal.aborted) {
      this.#stop.abort(new AppError('SERVICE_UNAVAILABLE', 'The server is stopping; send the request again'));
    }
  }
}
