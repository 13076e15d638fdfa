/**
 * Sign-in throttling: failed attempts are counted per email and per client address over a sliding
 * window; past the limit, sign-in is refused (429, with the wait) until the oldest failure leaves the
 * window, even with the right password. A success clears the email's count. The counts are this
 * process's: with several replicas each allows the limit (see docs/decisions.md).
 */
export class SignInThrottle {
  readonly #failures = new Map<string, number[]>();
  readonly #windowMs: number;
  readonly #perEmail: number;
  readonly #perAddress: number;

  constructor(options: { windowMs?: number; perEmail?: number; perAddress?: number } = {}) {
    this.#windowMs = options.windowMs ?? 15 * 60_000;
    this.#perEmail = options.perEmail ?? 5;
    this.#perAddress = options.perAddress ?? 20;
  }

  #recent(key: string, now: number): number[] {
    const list = (this.#failures.get(key) ?? []).filter((t) => t > now - this.#windowMs);
    if (list.length === 0) this.#failures.delete(key);
    else this.#failures.set(key, list);
    return list;
  }

  /** The milliseconds to wait before another attempt for this email from this address, or 0. */
  waitMs(email: string, address: string, now: number): number {
    let wait = 0;
    for (const [key, limit] of [
      [`e:${email}`, this.#perEmail],
      [`a:${address}`, this.#perAddress],
    ] as const) {
      const list = this.#recent(key, now);
      if (list.length >= limit) wait = Math.max(wait, (list[list.length - limit] ?? now) + this.#windowMs - now);
    }
    return wait;
  }

  failed(email: string, address: string, now: number): void {
    if (this.#failures.size > 100_000) this.#failures.clear();
    for (const key of [`e:${email}`, `a:${address}`]) this.#failures.set(key, [...this.#recent(key, now), now]);
  }

  succeeded(email: string): void {
    this.#failures.delete(`e:${email}`);
  }
}
