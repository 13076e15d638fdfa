import type { Completion, StreamPart } from '../types.js';
import { CREDIT_BATCH, type FromEngine, fromWireError, fromWirePart, type WirePart } from './engine-protocol.js';

/** What a call needs of the engine's process: a way to send it the call's abort and credit. */
export interface EngineLink {
  post(message: { t: 'abort'; call: number } | { t: 'credit'; call: number; parts: number }): void;
}

/**
 * One call in the local engine's process, as the server sees it: the parts that arrived and not yet taken,
 * then its end. `next()` answers the next part, undefined at the end, or throws the call's error.
 */
export class EngineCall {
  readonly #parts: WirePart[] = [];
  #read = 0;
  #taken = 0;
  #waiter: { resolve: (part: StreamPart | undefined) => void; reject: (err: unknown) => void } | undefined;
  #error: Error | undefined;
  #completion: Completion | undefined;
  #ended = false;
  #onEnd: (() => void) | undefined;

  /** The slot it holds among the engine's calls: the number its messages carry. */
  number = -1;

  constructor(private readonly link: EngineLink) {}

  get ended(): boolean {
    return this.#ended;
  }

  /** A `generate` call's answer, once it ended without an error. */
  get completion(): Completion | undefined {
    return this.#completion;
  }

  next(): Promise<StreamPart | undefined> {
    if (this.#read < this.#parts.length) return Promise.resolve(this.#take());
    if (this.#ended) return this.#error ? Promise.reject(this.#error) : Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  /** Asks the engine to stop the call; `settled()` resolves once its sequence is back. */
  abort(): void {
    if (!this.#ended) this.link.post({ t: 'abort', call: this.number });
  }

  /** Resolves once the engine has ended the call (an error, if any, is left to `next()`). */
  settled(): Promise<void> {
    if (this.#ended) return Promise.resolve();
    return new Promise((resolve) => {
      this.#onEnd = resolve;
    });
  }

  receive(message: Extract<FromEngine, { call: number }>): void {
    if (message.t === 'part') {
      const waiter = this.#waiter;
      this.#parts.push(message.part);
      if (waiter) {
        this.#waiter = undefined;
        waiter.resolve(this.#take());
      }
      return;
    }
    this.#completion = message.completion;
    this.end(message.error === undefined ? undefined : fromWireError(message.error));
  }

  end(error: Error | undefined): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    if (waiter && this.#read === this.#parts.length) {
      if (error) waiter.reject(error);
      else waiter.resolve(undefined);
    }
    this.#onEnd?.();
  }

  #take(): StreamPart {
    const part = this.#parts[this.#read] as WirePart;
    this.#parts[this.#read] = undefined as unknown as WirePart; // taken parts are garbage at once
    this.#read += 1;
    if (this.#read === this.#parts.length) {
      this.#parts.length = 0;
      this.#read = 0;
    }
    this.#taken += 1;
    if (this.#taken % CREDIT_BATCH === 0 && !this.#ended) {
      this.link.post({ t: 'credit', call: this.number, parts: CREDIT_BATCH });
    }
    return fromWirePart(part);
  }
}
