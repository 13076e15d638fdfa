import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { BackgroundEmbedder, type Embedder, LocalEmbedder } from '../../../src/retrieval/index.js';
import { EMBEDDING_MODEL } from '../../support/documents.js';

/** The server's embedder, counting the calls it answers. */
class CountingEmbedder implements Embedder {
  calls = 0;
  readonly id: string;
  constructor(private readonly inner: Embedder) {
    this.id = inner.id;
  }
  dimension(): Promise<number> {
    return this.inner.dimension();
  }
  embed(texts: readonly string[], signal?: AbortSignal, onTokens?: (tokens: number) => void) {
    this.calls++;
    return this.inner.embed(texts, signal, onTokens);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** A process's nice value, from /proc (field 19 of its stat; the name in field 2 may hold spaces). */
function niceOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

describe('BackgroundEmbedder: the local embedding model in a process at a lower CPU priority', () => {
  const local = new LocalEmbedder({ modelPath: EMBEDDING_MODEL });
  const background = new BackgroundEmbedder(local, local.options);
  after(async () => {
    await background.close();
    await local.close();
  });

  it("answers the server's embedder's vectors and token counts, with its id", async () => {
    const texts = ['Ines lives in Porto.', '', 'She teaches maths at a secondary school.'];
    let here = 0;
    let there = 0;
    await background.ready();
    const expected = await local.embed(texts, undefined, (n) => {
      here += n;
    });
    const got = await background.embed(texts, undefined, (n) => {
      there += n;
    });
    assert.equal(background.id, local.id);
    assert.equal(got.length, 3);
    assert.equal(got[1], undefined, 'a text of no token has no vector, as in the server');
    for (const i of [0, 2]) {
      const a = expected[i] as Float32Array;
      const b = got[i] as Float32Array;
      assert.ok(b instanceof Float32Array && b.length === a.length);
      assert.ok(
        a.every((x, k) => Math.abs(x - (b[k] ?? 0)) < 1e-5),
        `vector ${i} is the same model's`,
      );
    }
    assert.equal(there, here);
    assert.equal(await background.dimension(), 384);
  });

  it("answers with the server's embedder while its process starts, and with its own once loaded", async () => {
    const fallback = new CountingEmbedder(local);
    const starting = new BackgroundEmbedder(fallback, local.options);
    try {
      const [first] = await starting.embed(['asked before the model is loaded']);
      assert.equal(first?.length, 384);
      assert.equal(fallback.calls, 1, 'the first call went to the fallback');
      await starting.ready();
      const [later] = await starting.embed(['asked once it is loaded']);
      assert.equal(later?.length, 384);
      assert.equal(fallback.calls, 1, 'the later call did not');
    } finally {
      await starting.close();
    }
  });

  it('runs at nice 10, below the server', () => {
    const pid = background.pid;
    assert.ok(pid !== undefined, 'started');
    assert.ok(niceOf(pid) > 0);
    assert.equal(niceOf(pid), niceOf(process.pid) + 10);
  });

  it('an aborted call rejects with its reason, and the next one is answered', async () => {
    const controller = new AbortController();
    const reason = new Error('the extraction was abandoned');
    const pending = background.embed(
      Array.from({ length: 64 }, (_, i) => `sentence number ${i}`),
      controller.signal,
    );
    controller.abort(reason);
    await assert.rejects(pending, (err: unknown) => err === reason);
    const [vector] = await background.embed(['still here']);
    assert.equal(vector?.length, 384);
  });

  it('a killed process fails its calls, and the next call starts another', async () => {
    const pid = background.pid as number;
    const pending = background.embed(Array.from({ length: 200 }, (_, i) => `a longer sentence to embed, number ${i}`));
    process.kill(pid, 'SIGKILL');
    await assert.rejects(pending, /background embedder was killed by SIGKILL/);
    const [vector] = await background.embed(['again']);
    assert.equal(vector?.length, 384, 'answered (by the fallback while another process starts)');
    await background.ready();
    assert.ok(background.pid !== undefined && background.pid !== pid, 'another process');
  });

  it('a closed embedder refuses calls', async () => {
    const closing = new BackgroundEmbedder(local, local.options);
    await closing.ready();
    await closing.close();
    await assert.rejects(closing.embed(['late']), /background embedder is closed/);
  });
});
