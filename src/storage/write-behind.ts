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
