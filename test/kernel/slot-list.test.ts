import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { SlotList } from '../../src/kernel/index.js';
import { Lifecycle } from '../../src/system/index.js';

describe('SlotList', () => {
  it('holds what was added until its slot is deleted, reusing freed slots', () => {
    const list = new SlotList<string>();
    const a = list.add('a');
    const b = list.add('b');
    const c = list.add('c');
    assert.deepEqual([...list], ['a', 'b', 'c']);
    list.delete(b);
    assert.equal(list.size, 2);
    assert.deepEqual([...list], ['a', 'c']);
    // A second delete of the same ticket changes nothing while the slot is free.
    list.delete(b);
    assert.equal(list.size, 2);
    const d = list.add('d');
    assert.equal(d, b, 'the freed slot is reused');
    assert.deepEqual([...list], ['a', 'd', 'c']);
    list.delete(a);
    list.delete(c);
    list.delete(d);
    assert.equal(list.size, 0);
    assert.deepEqual([...list], []);
  });

  it('visits every item even when items are deleted during the visit', () => {
    const list = new SlotList<number>();
    const tickets = [1, 2, 3, 4].map((n) => list.add(n));
    const seen: number[] = [];
    for (const n of list) {
      seen.push(n);
      list.delete(tickets[n - 1] as number);
    }
    assert.deepEqual(seen, [1, 2, 3, 4]);
    assert.equal(list.size, 0);
  });

  /**
   * The reason it exists (kernel/slot-list.ts): a long-lived container of the requests in flight, promoted
   * by a full collection, then 20,000 items of ~1 KB through it, 32 at a time, with scavenges between. What
   * the old generation gains is what the scavenges kept of items long gone. The Set is the control: its old
   * tables link to their successors, and everything that went through it is kept (~20 MB measured on
   * Node 24); the SlotList keeps nothing of it (~40 KB). Run first in this process: V8 learns from a site's
   * survivors to allocate its objects old, so the control's run would colour a later one.
   */
  it('keeps nothing of the items that went through it in the old generation; a Set keeps them all', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as (options: { type: 'minor' | 'major'; execution: 'sync' }) => void;
    const oldSpaceUsed = () =>
      v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')?.space_used_size ?? 0;
    const churn = (hold: (item: object) => () => void): number => {
      const inFlight: Array<() => void> = [];
      for (let i = 0; i < 32; i++) inFlight.push(hold({ seed: i }));
      gc({ type: 'major', execution: 'sync' });
      const before = oldSpaceUsed();
      for (let i = 0; i < 20_000; i++) {
        inFlight.shift()?.();
        inFlight.push(hold({ payload: new Array(120).fill(i) }));
        if (i % 1000 === 999) gc({ type: 'minor', execution: 'sync' });
      }
      gc({ type: 'minor', execution: 'sync' });
      gc({ type: 'minor', execution: 'sync' });
      return oldSpaceUsed() - before;
    };
    const list = new SlotList<object>();
    const slotListGrowth = churn((item) => {
      const ticket = list.add(item);
      return () => list.delete(ticket);
    });
    const set = new Set<object>();
    const setGrowth = churn((item) => {
      set.add(item);
      return () => set.delete(item);
    });
    assert.ok(setGrowth > 10 * 1024 * 1024, `the control keeps what went through the Set: ${setGrowth} bytes`);
    assert.ok(slotListGrowth < 2 * 1024 * 1024, `the SlotList kept ${slotListGrowth} bytes`);
  });
});

describe('Lifecycle', () => {
  it('calls the stop of each request still following it at endWork, with the 503 to answer', () => {
    const lifecycle = new Lifecycle();
    const stopped: unknown[] = [];
    lifecycle.follow((reason) => stopped.push(['first', reason]));
    const gone = lifecycle.follow(() => stopped.push('gone'));
    lifecycle.follow((reason) => stopped.push(['third', reason]));
    lifecycle.unfollow(gone);
    assert.equal(lifecycle.stopped, false);
    lifecycle.endWork();
    assert.equal(lifecycle.stopped, true);
    assert.equal(lifecycle.draining, true);
    const reason = lifecycle.reason;
    assert.equal(reason?.code, 'SERVICE_UNAVAILABLE');
    assert.deepEqual(stopped, [
      ['first', reason],
      ['third', reason],
    ]);
    lifecycle.endWork();
    assert.equal(stopped.length, 2, 'a second endWork stops nothing twice');
  });
});
