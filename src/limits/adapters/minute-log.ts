/**
 * The admission times of one account's sliding minute, ascending. Appends are at the end (time moves
 * forward); pruning drops from the front by moving a head index, compacting only when half the array
 * is dead, so a busy account costs no per-request allocation.
 */
export class MinuteLog {
  #times: number[];
  #head = 0;

  constructor(times: readonly number[] = []) {
    // Copied by push into a fresh literal, never spread: an array better-sqlite3 made (even an empty one) has
    // generic elements, and a spread keeps them, so every later push boxed its time in a HeapNumber that lived
    // the minute — 50k objects at 1,000 req/s, promoted out of the young generation, each a slot the
    // scavenges had to visit. Pushed numbers land in unboxed double elements.
    const own: number[] = [];
    for (const time of times) own.push(time);
    this.#times = own.sort((a, b) => a - b);
  }

  /** Adds a time, in its place when it is older than the newest one (a clock that moved back). */
  append(time: number): void {
    const times = this.#times;
    const last = times.length > this.#head ? (times[times.length - 1] as number) : -Infinity;
    if (time >= last) times.push(time);
    else times.splice(this.#firstAfter(time), 0, time);
  }

  /** Drops every time ≤ `cutoff`; returns how many went. */
  pruneThrough(cutoff: number): number {
    const start = this.#head;
    this.#head = this.#firstAfter(cutoff);
    const pruned = this.#head - start;
    if (this.#head > 64 && this.#head * 2 > this.#times.length) {
      this.#times = this.#times.slice(this.#head);
      this.#head = 0;
    }
    return pruned;
  }

  /** How many times are > `cutoff`. */
  countAfter(cutoff: number): number {
    return this.#times.length - this.#firstAfter(cutoff);
  }

  /** The oldest time > `cutoff`, or null. */
  oldestAfter(cutoff: number): number | null {
    return this.#times[this.#firstAfter(cutoff)] ?? null;
  }

  /** Index of the first live time > `value` (binary search). */
  #firstAfter(value: number): number {
    let lo = this.#head;
    let hi = this.#times.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#times[mid] as number) <= value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
