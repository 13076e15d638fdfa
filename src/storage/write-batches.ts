import type { Transaction } from './transaction.js';

/** How long a batch's id is remembered: longer than any retry, or a spill file left behind by a stopped server. */
const KEEP_MS = 7 * 86_400_000;
/** Old ids are deleted at most this often, by the write that comes first after it. */
const PRUNE_EVERY_MS = 3_600_000;

/**
 * The ids of the write-behind batches PostgreSQL has committed (`write_batches`). A connection lost after COMMIT
 * left its client an error for a batch that was stored; written again it would count twice (usage rows are
 * inserted, SLA buckets added to). So each batch's transaction first claims its id: a batch whose id is already
 * there is not written again. Embedded SQLite needs none: its transaction runs in the process, and a failed one
 * is rolled back.
 */
export class WriteBatches {
  #nextPrune = 0;

  /** Claims the batch in `tx`; false when it was committed before (its transaction should write nothing). */
  async claim(tx: Transaction, batchId: string, now: number = Date.now()): Promise<boolean> {
    if (now >= this.#nextPrune) {
      this.#nextPrune = now + PRUNE_EVERY_MS;
      await tx.query('DELETE FROM write_batches WHERE written_at < $1', [now - KEEP_MS]);
    }
    const claimed = await tx.query(
      'INSERT INTO write_batches (id, written_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id',
      [batchId, now],
    );
    return claimed.length === 1;
  }
}
