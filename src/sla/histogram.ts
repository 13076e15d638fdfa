/**
 * Fixed histogram boundaries (upper bounds, milliseconds) for latency and time to first token. Fixed so
 * that buckets from any minute, replica or account can be added column by column; the same bounds (in
 * seconds) are the Prometheus histograms' buckets. The last bucket is everything above the last bound.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = [
  10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000, 120_000,
];

/** Counts per bucket: LATENCY_BOUNDS_MS.length + 1 slots, the last one above the last bound. */
export type BucketCounts = number[];

export const BUCKET_COUNT = LATENCY_BOUNDS_MS.length + 1;

export function emptyCounts(): BucketCounts {
  return new Array<number>(BUCKET_COUNT).fill(0);
}

/** The slot of a value: the first bound it does not exceed (Prometheus' `le`), else the overflow slot. */
export function bucketOf(ms: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i++) if (ms <= (LATENCY_BOUNDS_MS[i] as number)) return i;
  return LATENCY_BOUNDS_MS.length;
}

/**
 * The q-quantile (0..1) estimated from bucket counts, the way Prometheus' `histogram_quantile` does: find
 * the bucket holding the rank q·n, then interpolate linearly between its lower and upper bound (values
 * are assumed spread evenly inside a bucket). The first bucket starts at 0; a rank in the overflow bucket
 * answers the last finite bound (a lower bound of the truth). No observations: 0. The error is at most
 * the width of the bucket the quantile falls in.
 */
export function quantile(counts: readonly number[], q: number): number {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return 0;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i] as number;
    if (n > 0 && seen + n >= rank) {
      if (i >= LATENCY_BOUNDS_MS.length) return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1] as number;
      const lower = i === 0 ? 0 : (LATENCY_BOUNDS_MS[i - 1] as number);
      const upper = LATENCY_BOUNDS_MS[i] as number;
      return Math.round(lower + (upper - lower) * ((rank - seen) / n));
    }
    seen += n;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1] as number;
}
