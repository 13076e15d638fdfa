/**
 * What a long-lived owner holds while it is in use — the responses in flight, the stop callbacks of the
 * requests in flight — in an array of slots reused through a free list. `add` answers the slot, `delete`
 * takes it back (once: a freed slot may already hold the next item).
 *
 * Why not a Set, or an AbortSignal's listeners: what they leave behind when an item goes keeps a pointer
 * to what came after it. V8 moves a Set into a new hash table every few dozen additions and deletions, and
 * the old table keeps the items it held and a pointer to its successor (for live iterators); an
 * EventTarget's removed listener keeps its `next`. Once one of those leftovers is in the old generation (a
 * full collection promotes everything alive, a slow request outlives two scavenges), each scavenge finds
 * the successor through it and keeps it, and with it every item added since: every request's whole object
 * graph survived its scavenges and was promoted, until the next full collection started it over. In
 * bench:chat's setup that was ~3 MB promoted a scavenge instead of ~0.2, 4.7-8.0 µs of GC a cache miss
 * instead of 2.3-2.6, and 126-130 µs of CPU instead of 101-115. A slot set back to `undefined` leaves nothing
 * behind.
 */
export class SlotList<T> {
  readonly #slots: (T | undefined)[] = [];
  readonly #free: number[] = [];
  #size = 0;

  /** Holds `item`; answers its slot, for `delete`. */
  add(item: T): number {
    const slot = this.#free.pop() ?? this.#slots.length;
    this.#slots[slot] = item;
    this.#size += 1;
    return slot;
  }

  /** What `slot` holds, if anything. */
  get(slot: number): T | undefined {
    return this.#slots[slot];
  }

  /** Lets go of what `slot` holds. Call it once per `add`: the slot is reused afterwards. */
  delete(slot: number): void {
    if (this.#slots[slot] === undefined) return;
    this.#slots[slot] = undefined;
    this.#free.push(slot);
    this.#size -= 1;
  }

  get size(): number {
    return this.#size;
  }

  /** The items held, in slot order (items added or deleted meanwhile may or may not be visited). */
  *[Symbol.iterator](): IterableIterator<T> {
    const slots = this.#slots;
    for (let i = 0; i < slots.length; i++) {
      const item = slots[i];
      if (item !== undefined) yield item;
    }
  }
}
