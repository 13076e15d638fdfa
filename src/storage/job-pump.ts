/**
 * What drives a worker over a stored job queue: `drain` runs until it finds nothing to do; a kick while it
 * runs makes it look once more when it ends (never two drains at once); a timer kicks it every `pollMs` for
 * jobs another process left (a crash, a replica's burst). close() stops the kicks, aborts `signal` (work
 * under way stops, its jobs stay queued under their leases) and waits for the running drain. A drain's
 * failure goes to `onError`; the next kick starts afresh.
 */
export class JobPump {
  readonly #drain: () => Promise<void>;
  readonly #pollMs: number;
  readonly #onError: (err: unknown) => void;
  readonly #abort = new AbortController();
  #draining: Promise<void> | undefined;
  #again = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(drain: () => Promise<void>, options: { pollMs: number; onError: (err: unknown) => void }) {
    this.#drain = drain;
    this.#pollMs = options.pollMs;
    this.#onError = options.onError;
  }

  /** Aborted by close(). */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get closed(): boolean {
    return this.#abort.signal.aborted;
  }

  /** The drain under way, if any. */
  get running(): Promise<void> | undefined {
    return this.#draining;
  }

  /** Polls from now on, and looks at once. */
  start(): void {
    this.#timer = setInterval(() => this.kick(), this.#pollMs);
    this.#timer.unref();
    this.kick();
  }

  kick(): void {
    if (this.closed) return;
    if (this.#draining) {
      this.#again = true;
      return;
    }
    this.#draining = (async () => {
      do {
        this.#again = false;
        await this.#drain();
      } while (this.#again && !this.closed);
    })()
      .catch(this.#onError)
      .finally(() => {
        this.#draining = undefined;
      });
  }

  async close(): Promise<void> {
    this.#abort.abort();
    if (this.#timer) clearInterval(this.#timer);
    await this.#draining?.catch(() => undefined);
  }
}
