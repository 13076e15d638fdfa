import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ProbeReport } from '../../bench/probe.js';
import { type Measured, medianRatio, mergeRounds } from '../../bench/throughput-rounds.js';

function window(rps: number, requests: number, cpuMicros: number, loopDelayP99Ms = 2): Measured {
  const report: ProbeReport = {
    elapsedMs: 6000,
    cpuMicros,
    allocatedBytes: requests * 1024,
    gcMicros: requests,
    scavenges: 10,
    majors: 0,
    longestGcMs: loopDelayP99Ms / 2,
    loopDelayP50Ms: 0.5,
    loopDelayP99Ms,
    loopDelayMaxMs: loopDelayP99Ms * 2,
  };
  return { rps, p50: 1, p99: rps > 9000 ? 4 : 6, requests, non2xx: 0, errors: 0, report };
}

describe('bench:chat throughput rounds', () => {
  it("pairs each round's ratio and takes their median, not the ratio of medians", () => {
    // The machine drifts: round 2 is slow for both, round 3 fast for both. Paired, pvai is 0.6× in every round.
    const floor = [window(10_000, 1, 1), window(5_000, 1, 1), window(20_000, 1, 1)];
    const pvai = [window(6_000, 1, 1), window(3_000, 1, 1), window(12_000, 1, 1)];
    assert.equal(medianRatio(pvai, floor), 0.6);
    // A drifting outlier round moves the median of ratios by nothing.
    const spoiled = [window(6_000, 1, 1), window(3_000, 1, 1), window(2_000, 1, 1)];
    assert.equal(medianRatio(spoiled, floor), 0.6);
  });

  it('refuses rounds that do not pair', () => {
    assert.throws(() => medianRatio([window(1, 1, 1)], []), /do not pair/);
  });

  it("merges a row: median req/s and latencies, CPU and bytes summed over all the windows' requests", () => {
    const merged = mergeRounds([
      window(9_000, 54_000, 5_400_000),
      window(11_000, 66_000, 7_260_000),
      window(10_000, 60_000, 6_000_000, 5),
    ]);
    assert.equal(merged.rps, 10_000);
    assert.equal(merged.p99, 4);
    assert.equal(merged.requests, 180_000);
    assert.ok(merged.report);
    // (5.4 + 7.26 + 6.0) s of CPU over 180,000 requests: 103.67 µs a request, the rounds' totals, not a median.
    assert.equal(Math.round((merged.report.cpuMicros / merged.requests) * 100) / 100, 103.67);
    assert.equal(merged.report.allocatedBytes, 180_000 * 1024);
    assert.equal(merged.report.loopDelayP99Ms, 2);
    assert.equal(merged.report.loopDelayMaxMs, 10);
  });

  it('leaves a single round as it was measured (with its profile paths)', () => {
    const only = {
      ...window(10_000, 60_000, 6_000_000),
      report: { ...window(1, 1, 1).report, profilePath: '/p' },
    } as Measured;
    assert.equal(mergeRounds([only]), only);
  });
});
