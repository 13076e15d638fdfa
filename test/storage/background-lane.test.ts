import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BackgroundLane } from '../../src/storage/index.js';

/** Holds the event loop for `ms`, as a chunk of SQLite writes does. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin
  }
}

/** A writer of `chunks` chunks of `chunkMs` each; returns when each chunk began. */
async function writer(lane: BackgroundLane, chunks: number, chunkMs: number, hurry = () => false): Promise<number[]> {
  const began: number[] = [];
  for (let c = 0; c < chunks; c++) {
    await lane.turn(hurry());
    began.push(performance.now());
    busy(chunkMs);
  }
  return began;
}

describe('BackgroundLane (write-behind chunks beside the requests)', () => {
  it('runs chunks back to back while the slice lasts, then pauses for the gap', async () => {
    // Slices ten chunks long, so that a busy machine stretching a chunk or two (the test runs beside others on two
    // cores) still leaves most of them back to back; a timer never fires early, so every gap is a full one.
    const lane = new BackgroundLane({ sliceMs: 20, gapMs: 60 });
    const began = await writer(lane, 30, 2);
    const pauses = began.slice(1).map((t, i) => t - (began[i] as number));
    assert.ok(
      pauses.filter((p) => p >= 55).length >= 2,
      `at least two pauses of the gap: ${pauses.map((p) => p.toFixed(1))}`,
    );
    assert.ok(
      pauses.filter((p) => p < 10).length >= 15,
      `chunks inside a slice ran back to back: ${pauses.map((p) => p.toFixed(1))}`,
    );
  });

  it('lets the event loop run other work between slices', async () => {
    const lane = new BackgroundLane({ sliceMs: 1, gapMs: 2 });
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await writer(lane, 40, 0.5);
    ticking = false;
    // In one piece the 40 chunks would leave room for a turn or two; taken a slice at a time, one between each.
    assert.ok(ticks >= 10, `other work ran in ${ticks} turns meanwhile`);
  });

  it('starts the next slice on the next turn, not after the gap, for a writer that hurries', async () => {
    const lane = new BackgroundLane({ sliceMs: 1, gapMs: 10_000 });
    const started = performance.now();
    await writer(lane, 20, 0.5, () => true);
    assert.ok(performance.now() - started < 5_000, 'a 10 s gap was never waited');
  });

  it('gives the slice to the writers waiting in turn', async () => {
    const lane = new BackgroundLane({ sliceMs: 1, gapMs: 1 });
    const order: string[] = [];
    const run = async (name: string) => {
      for (let c = 0; c < 6; c++) {
        await lane.turn();
        order.push(name);
        busy(1.5);
      }
    };
    await Promise.all([run('a'), run('b')]);
    assert.equal(order.length, 12);
    // Each chunk outlasts a slice, so each turn is one chunk, and the two writers alternate.
    const switches = order.slice(1).filter((name, i) => name !== order[i]).length;
    assert.ok(switches >= 9, `the writers took turns: ${order.join('')}`);
    assert.equal(lane.waiting, 0);
  });
});
