/**
 * The abort signal of one HTTP attempt: fires when the caller aborts, or when `timeoutMs` passes
 * without `touch()`.
 *
 * Why not undici's headersTimeout/bodyTimeout alone: below a second they fire with ~1 s granularity
 * (a 150 ms timeout fired after ~1 s). `Timeout.refresh()` makes re-arming per chunk cheap, and one
 * listener on the caller's signal (removed afterwards) avoids AbortSignal.any's per-request cost.
 */
export class AttemptDeadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private expired = false;
  private readonly onCallerAbort: () => void;

  constructor(
    private readonly callerSignal: AbortSignal,
    timeoutMs: number,
  ) {
    this.onCallerAbort = () => this.controller.abort(callerSignal.reason);
    if (callerSignal.aborted) this.controller.abort(callerSignal.reason);
    else callerSignal.addEventListener('abort', this.onCallerAbort, { once: true });
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort(new DOMException(`no response within ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True when the attempt ended because the deadline passed (not because the caller aborted). */
  get timedOut(): boolean {
    return this.expired && !this.callerSignal.aborted;
  }

  /** Restarts the countdown (progress was made). */
  touch(): void {
    this.timer.refresh();
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.callerSignal.removeEventListener('abort', this.onCallerAbort);
  }
}
