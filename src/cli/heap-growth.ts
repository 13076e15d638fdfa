import { setFlagsFromString } from 'node:v8';

/**
 * How far `pvai serve` lets V8's old generation grow past what its last full collection kept: 300 % more,
 * i.e. the next full collection starts at 4× the live heap — the most V8 itself chooses under load on a machine
 * with memory (`MaxGrowingFactor`), now also after a quiet spell.
 *
 * Why a fixed factor: V8 sizes that limit from the old generation's allocation rate measured just before the
 * collection. A full collection that runs while the server is idle (its memory reducer's, or one the heap
 * reaches between bursts) measures a rate near zero, so V8 chooses its minimum factor, 1.1: with pvai's
 * ~80 MB live heap the next collection is due 8 MB later. When traffic comes back, what requests promote
 * fills that in seconds, and full collections follow one another, each pausing the event loop for 6–25 ms.
 * Measured at 1,000 req/s after 15 s idle gaps (`--trace-gc-verbose`): "factor 1.1 based on ... mutator=0",
 * then three full collections in one 5 s window and its p99 at 34.9 ms instead of ~3. With a fixed factor of
 * 3 no full collection fell in a window after a quiet spell (p99 2.99–4.22 ms in all five). 4 rather than 3:
 * under sustained load V8 chose 4 here by itself (`speed_ratio` 14–29), so a fixed 4 changes nothing there;
 * throughput phases with and without it, alternating: 4,176 / 3,903 / 4,154 misses/s against 3,610 / 4,565 /
 * 3,520.
 *
 * Memory: the limit is a trigger, not an allocation; idle, little is promoted and the memory reducer still
 * collects what is garbage (the server's RSS after a quiet spell was 258–282 MB with it, 581–604 without, in
 * two alternating pairs). V8 keeps the limit within half the way to the heap's maximum whatever the factor.
 * A factor the operator gives node (`--heap-growing-percent=N`) is left as it is.
 */
export const HEAP_GROWING_PERCENT = 300;

const FLAG = /--heap[-_]growing[-_]percent\b/;

export type HeapGrowth = { source: 'pvai'; percent: number } | { source: 'operator' };

/** Sets the factor unless node was started with one (in its arguments or NODE_OPTIONS). */
export function steadyHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): HeapGrowth {
  if (execArgv.some((arg) => FLAG.test(arg)) || FLAG.test(nodeOptions ?? '')) return { source: 'operator' };
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  return { source: 'pvai', percent: HEAP_GROWING_PERCENT };
}
