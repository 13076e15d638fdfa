/**
 * bench:chat's throughput rows in alternating rounds. On this VM one build's throughput moves by ±10 % from one
 * minute to the next (measured with bench:ab, a build against itself), so a ratio read off one window of the floor
 * and one of pvai, a minute apart, swings by as much as the gap it is meant to show. Each round measures the rows
 * back to back, the order flipped every round; a ratio is the median of the rounds' paired ratios, and a row's
 * figures are its rounds' median req/s and latencies, and its windows' CPU, bytes and GC summed over the requests
 * they served.
 */
import { type LoadResult, median } from './lib.js';
import type { ProbeReport } from './probe.js';

export type Measured = LoadResult & { report?: ProbeReport };

/** One row from its rounds: median req/s and latencies, totals of what the windows counted. */
export function mergeRounds(rounds: readonly Measured[]): Measured {
  const [first] = rounds;
  if (!first) throw new Error('mergeRounds: no rounds');
  if (rounds.length === 1) return first;
  const sum = (pick: (m: Measured) => number) => rounds.reduce((total, m) => total + pick(m), 0);
  const merged: Measured = {
    rps: median(rounds.map((m) => m.rps)),
    p50: median(rounds.map((m) => m.p50)),
    p99: median(rounds.map((m) => m.p99)),
    requests: sum((m) => m.requests),
    non2xx: sum((m) => m.non2xx),
    errors: sum((m) => m.errors),
  };
  const reports = rounds.flatMap((m) => (m.report ? [m.report] : []));
  if (reports.length === rounds.length) {
    const total = (pick: (r: ProbeReport) => number) => reports.reduce((n, r) => n + pick(r), 0);
    merged.report = {
      elapsedMs: total((r) => r.elapsedMs),
      cpuMicros: total((r) => r.cpuMicros),
      allocatedBytes: total((r) => r.allocatedBytes),
      gcMicros: total((r) => r.gcMicros),
      scavenges: total((r) => r.scavenges),
      majors: total((r) => r.majors),
      longestGcMs: Math.max(...reports.map((r) => r.longestGcMs)),
      loopDelayP50Ms: median(reports.map((r) => r.loopDelayP50Ms)),
      loopDelayP99Ms: median(reports.map((r) => r.loopDelayP99Ms)),
      loopDelayMaxMs: Math.max(...reports.map((r) => r.loopDelayMaxMs)),
    };
  }
  return merged;
}

/** The median over rounds of `a`'s req/s over `b`'s in the same round. */
export function medianRatio(a: readonly Measured[], b: readonly Measured[]): number {
  if (a.length !== b.length || a.length === 0) throw new Error('medianRatio: rounds do not pair');
  return median(a.map((m, i) => m.rps / (b[i] as Measured).rps));
}
