/**
 * The `size` best (row, score) pairs offered, in a min-heap whose root is the one to beat: a scan of
 * 100k scores keeps 50 in O(n log 50), and almost every offer is one comparison with the root.
 */
export class TopK {
  readonly #size: number;
  readonly #scores: Float64Array;
  readonly #rows: Int32Array;
  #filled = 0;

  constructor(size: number) {
    this.#size = Math.max(0, size);
    this.#scores = new Float64Array(this.#size);
    this.#rows = new Int32Array(this.#size);
  }

  /** What an offer must beat to be kept (-Infinity until full): callers skip the call below it. */
  get floor(): number {
    return this.#filled < this.#size ? Number.NEGATIVE_INFINITY : (this.#scores[0] as number);
  }

  offer(row: number, score: number): void {
    const scores = this.#scores;
    const rows = this.#rows;
    const size = this.#size;
    if (this.#filled < size) {
      let i = this.#filled++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if ((scores[parent] as number) <= score) break;
        scores[i] = scores[parent] as number;
        rows[i] = rows[parent] as number;
        i = parent;
      }
      scores[i] = score;
      rows[i] = row;
      return;
    }
    if (size === 0 || score <= (scores[0] as number)) return;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= size) break;
      const right = left + 1;
      const child = right < size && (scores[right] as number) < (scores[left] as number) ? right : left;
      if ((scores[child] as number) >= score) break;
      scores[i] = scores[child] as number;
      rows[i] = rows[child] as number;
      i = child;
    }
    scores[i] = score;
    rows[i] = row;
  }

  /** What was kept, best first; equal scores by row, lowest first. */
  best(): Array<{ row: number; score: number }> {
    const out: Array<{ row: number; score: number }> = [];
    for (let i = 0; i < this.#filled; i++) out.push({ row: this.#rows[i] as number, score: this.#scores[i] as number });
    return out.sort((a, b) => b.score - a.score || a.row - b.row);
  }
}
