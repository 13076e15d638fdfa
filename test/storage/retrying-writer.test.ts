import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { RetryingWriter } from '../../src/storage/index.js';
import { eventually } from '../support/eventually.js';

/** A store that refuses its writes while `down` is true (or the next `failures` of them), recording the rest. */
function flakyStore(options: { failures?: number; down?: boolean } = {}) {
  const store = {
    down: options.down ?? false,
    failures: options.failures ?? 0,
    written: [] as number[],
    batches: [] as string[],
    attempts: [] as Array<{ at: number; batchId: string }>,
    error: new Error('connect ECONNREFUSED 127.0.0.1:5432'),
    async write(items: number[], batchId: string): Promise<void> {
      store.attempts.push({ at: Date.now(), batchId });
      if (store.down) throw store.error;
      if (store.failures > 0) {
        store.failures -= 1;
        throw store.error;
      }
      store.written.push(...items);
      store.batches.push(batchId);
    },
  };
  return store;
}

const dirs: string[] = [];
function spillFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'pvai-retrying-writer-'));
  dirs.push(dir);
  return join(dir, 'pending', 'usage.jsonl');
}
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

describe('RetryingWriter: a write the store refuses is kept and written again', () => {
  it('retries a batch that failed 4 times under its id, 100 ms doubling, until it is written once', async () => {
    const store = flakyStore({ failures: 4 });
    const errors: number[] = [];
    const writer = new RetryingWriter<number>({ write: store.write, onError: (_err, pending) => errors.push(pending) });
    await writer.submit([1, 2, 3]);
    assert.deepEqual(store.written, [], 'the first write failed');
    assert.equal(writer.state().pending, 3, 'its rows are kept');
    await eventually(
      async () => store.written.length,
      (n) => n === 3,
      5000,
    );
    assert.deepEqual(store.written, [1, 2, 3], 'written once');
    assert.equal(new Set(store.attempts.map((a) => a.batchId)).size, 1, 'every try carries the same batch id');
    const gaps = store.attempts.slice(1).map((a, i) => a.at - (store.attempts[i]?.at ?? 0));
    assert.equal(gaps.length, 4);
    for (const [i, gap] of gaps.entries()) assert.ok(gap >= 100 * 2 ** i - 5, `retry ${i + 1} after ${gap} ms`);
    assert.deepEqual(errors, [3, 3, 3, 3], 'each failure reported with what is kept');
    assert.deepEqual(writer.state(), { pending: 0, retries: 4, spilled: 0 });
  });

  it('while a batch waits, new ones join it rather than meet the outage each; flush rejects with the store error', async () => {
    const store = flakyStore({ down: true });
    const writer = new RetryingWriter<number>({ write: store.write, initialDelayMs: 60_000 });
    await writer.submit(range(0, 5));
    await writer.submit(range(5, 5));
    await writer.submit(range(10, 5));
    assert.equal(store.attempts.length, 1, 'only the first batch tried');
    assert.equal(writer.state().pending, 15);
    await assert.rejects(writer.flush(), (err) => err === store.error, 'a read sees the original error');
    store.down = false;
    await writer.flush();
    assert.deepEqual(sorted(store.written), range(0, 15));
    assert.equal(writer.state().pending, 0);
  });

  it('keeps at most maxPending in memory and spills the rest to the file, written back once the store answers', async () => {
    const store = flakyStore({ down: true });
    const file = spillFile();
    const writer = new RetryingWriter<number>({
      write: store.write,
      spillFile: file,
      maxPending: 10,
      initialDelayMs: 60_000,
    });
    for (let b = 0; b < 5; b++) await writer.submit(range(b * 4, 4));
    assert.deepEqual(writer.state(), { pending: 20, retries: 0, spilled: 12 });
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    assert.equal(lines.length, 3, 'three batches of four past the bound of ten');
    store.down = false;
    await writer.flush();
    assert.deepEqual(sorted(store.written), range(0, 20), 'every row written once');
    assert.equal(existsSync(file), false, 'the spill file is removed once written');
    assert.equal(existsSync(`${file}.draining`), false);
    assert.equal(writer.state().pending, 0);
  });

  it('a drain that fails half way keeps the rest of the file and starts there next time', async () => {
    const file = spillFile();
    const store = flakyStore({ down: true });
    const first = new RetryingWriter<number>({
      write: store.write,
      spillFile: file,
      maxPending: 0,
      initialDelayMs: 60_000,
    });
    for (let b = 0; b < 3; b++) await first.submit([b]);
    // The first batch was tried (and failed), then kept past a bound of 0: all three are in the file.
    assert.equal(readFileSync(file, 'utf8').trim().split('\n').length, 3);
    store.down = false;
    store.failures = 0;
    let calls = 0;
    const failSecond = async (items: number[], batchId: string) => {
      calls += 1;
      if (calls === 2) throw store.error;
      await store.write(items, batchId);
    };
    const second = new RetryingWriter<number>({ write: failSecond, spillFile: file, initialDelayMs: 60_000 });
    await assert.rejects(second.flush(), (err) => err === store.error);
    assert.deepEqual(store.written, [0]);
    const rest = readFileSync(`${file}.draining`, 'utf8').trim().split('\n');
    assert.deepEqual(
      rest.map((l) => (JSON.parse(l) as { items: number[] }).items),
      [[1], [2]],
    );
    await second.flush();
    assert.deepEqual(store.written, [0, 1, 2], 'each once, in order');
    assert.equal(existsSync(`${file}.draining`), false);
  });

  it('close() spills what it cannot write; a new writer on the same file writes it at start, skipping a torn line', async () => {
    const file = spillFile();
    const store = flakyStore({ down: true });
    const errors: unknown[] = [];
    const first = new RetryingWriter<number>({
      write: store.write,
      spillFile: file,
      onError: (err) => errors.push(err),
    });
    await first.submit(range(0, 3));
    await first.submit(range(3, 3));
    await first.close();
    assert.equal(readFileSync(file, 'utf8').trim().split('\n').length, 2, 'both batches spilled at close');
    // A crash while a line was appended leaves it cut short.
    writeFileSync(file, `${readFileSync(file, 'utf8')}{"id":"torn","items":[9`, { flag: 'w' });
    store.down = false;
    const second = new RetryingWriter<number>({
      write: store.write,
      spillFile: file,
      onError: (err) => errors.push(err),
    });
    await eventually(
      async () => store.written.length,
      (n) => n === 6,
      3000,
    );
    assert.deepEqual(sorted(store.written), range(0, 6), 'the spilled rows written by the next process, once');
    await eventually(
      async () => existsSync(file) || existsSync(`${file}.draining`),
      (present) => !present,
      3000,
    );
    assert.equal(second.state().pending, 0);
    assert.ok(
      errors.some((e) => /unreadable line/.test(String(e))),
      'the torn line is reported',
    );
  });
});
