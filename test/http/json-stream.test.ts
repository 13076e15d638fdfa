import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { setImmediate as tick } from 'node:timers/promises';
import { jsonStream } from '../../src/http/index.js';

async function* items<T>(list: readonly T[], seen?: { n: number; done: boolean }): AsyncGenerator<T> {
  try {
    for (const item of list) {
      if (seen) seen.n++;
      yield item;
    }
  } finally {
    if (seen) seen.done = true;
  }
}

async function textOf(stream: Readable): Promise<string> {
  let out = '';
  for await (const chunk of stream) out += String(chunk);
  return out;
}

/** The JSON body written while it is read (src/http/json-stream.ts), as the HTTP layer sends an export. */
describe('jsonStream', () => {
  it('writes what JSON.stringify writes, with lists given as async iterables', async () => {
    const rows = Array.from({ length: 3000 }, (_, i) => ({ i, text: `row ${i} "quoted" \u2028 ü`, none: undefined }));
    const value = {
      object: 'user.export',
      skipped: undefined,
      nested: { empty: [], list: [1, null, 'x'], deeper: { n: 1.5, ok: true } },
      rows,
      memories: [] as unknown[],
    };
    const streamed = { ...value, rows: items(rows), memories: items([]) };
    assert.equal(await textOf(await jsonStream(streamed)), JSON.stringify(value));
  });

  it('pulls items only as the reader takes them, and stops the source when the reader leaves', async () => {
    const seen = { n: 0, done: false };
    const rows = Array.from({ length: 100_000 }, (_, i) => ({ i, text: 'x'.repeat(100) }));
    const stream = await jsonStream({ rows: items(rows, seen) });
    await once(stream, 'readable');
    for (let i = 0; i < 10; i++) await tick();
    // One piece made before it resolved, and what the stream buffers ahead: nowhere near all 100,000 rows.
    assert.ok(seen.n < 1000, `${seen.n} rows read before anything was taken`);
    const first: unknown = stream.read();
    assert.ok(first, 'the first piece is there');
    stream.destroy();
    await tick();
    assert.ok(seen.done, "the source's finally ran");
    assert.ok(seen.n < 2000, `${seen.n} rows read in all`);
  });

  it('rejects when the first piece fails (an error answer is still possible), errors the stream when a later one does', async () => {
    async function* failing(after: number): AsyncGenerator<{ i: number; text: string }> {
      for (let i = 0; i < after; i++) yield { i, text: 'y'.repeat(1000) };
      throw new Error('the store went away');
    }
    await assert.rejects(jsonStream({ rows: failing(0) }), /the store went away/);
    const stream = await jsonStream({ rows: failing(200) });
    await assert.rejects(textOf(stream), /the store went away/);
  });
});
