/**
 * The timer of a write-behind buffer: schedule() asks for a write at most `intervalMs` from now (one
 * timer however often it is asked), cancel() drops it because the owner is writing at once. A failed
 * timed write goes to `onError`; what it was writing stays pending with its owner.
 */
export class WriteBehindTimer {
  readonly #write: () => void;
  readonly #intervalMs: number;
  readonly #onError: (err: unknown) => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(write: () => void, intervalMs: number, onError: (err: unknown) => void = () => undefined) {
    this.#write = write;
    this.#intervalMs = intervalMs;
    this.#onError = onError;
  }

  schedule(): void {
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      try {
        this.#write();
      } catch (err) {
        this.#onError(err);
      }
    }, this.#intervalMs);
  }

  cancel(): void {
    if (this.#timer) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }
}

/**
 * A write at the end of the current event-loop turn (a `setImmediate`): everything asked for while the
 * turn's I/O callbacks and their promise chains ran goes into one write, a group commit. Callers that
 * must not go on before their change is stored wait for that write; under load one transaction then
 * carries every request of the turn, at one request alone it adds a few microseconds. The write handles
 * its own failures: only its owner knows what to undo.
 */
export class EndOfTurnWrite {
  readonly #write: () => void;
  #immediate: NodeJS.Immediate | undefined;

  constructor(write: () => void) {
    this.#write = write;
  }

  schedule(): void {
    this.#immediate ??= setImmediate(() => {
      this.#immediate = undefined;
      this.#write();
    });
  }

  cancel(): void {
    if (this.#immediate) {
      clearImmediate(this.#immediate);
      this.#immediate = undefined;
    }
  }
}
