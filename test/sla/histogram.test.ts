import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUCKET_COUNT, bucketOf, LATENCY_BOUNDS_MS, quantile } from '../../src/sla/index.js';

describe('SLA histogram', () => {
  it('puts a value in the first bucket whose bound it does not exceed (Prometheus le)', () => {
    assert.equal(bucketOf(0), 0);
    assert.equal(bucketOf(10), 0);
    assert.equal(bucketOf(10.5), 1);
    assert.equal(bucketOf(1000), LATENCY_BOUNDS_MS.indexOf(1000));
    assert.equal(bucketOf(10_000_000), BUCKET_COUNT - 1);
  });

  it('estimates quantiles by linear interpolation inside the bucket holding the rank', () => {
    const counts = new Array<number>(BUCKET_COUNT).fill(0);
    // 100 observations: 50 in (50, 100], 50 in (500, 1000].
    counts[bucketOf(75)] = 50;
    counts[bucketOf(750)] = 50;
    assert.equal(quantile(counts, 0.5), 100);
    assert.equal(quantile(counts, 0.25), 75);
    assert.equal(quantile(counts, 0.95), 950);
    assert.equal(quantile(counts, 0.99), 990);
    assert.equal(quantile(new Array<number>(BUCKET_COUNT).fill(0), 0.5), 0);
    const overflow = new Array<number>(BUCKET_COUNT).fill(0);
    overflow[BUCKET_COUNT - 1] = 3;
    assert.equal(quantile(overflow, 0.5), LATENCY_BOUNDS_MS.at(-1));
  });
});
