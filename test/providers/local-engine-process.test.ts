import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fromWireError, fromWirePart, toWireError } from '../../src/providers/local/engine-protocol.js';
import { LocalChatProvider } from '../../src/providers/local/index.js';
import { type GenerationRequest, ProviderError } from '../../src/providers/types.js';
import { TEST_MODEL } from '../support/server.js';

const never = (): AbortSignal => new AbortController().signal;
const ask = (content: string, extra: Partial<GenerationRequest> = {}): GenerationRequest => ({
  model: 'stories',
  messages: [{ role: 'user', content }],
  maxTokens: 400,
  temperature: 0.8,
  seed: 7,
  ...extra,
});
const turn = () => new Promise((resolve) => setTimeout(resolve, 5));

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await turn();
  }
}

describe("errors crossing to and from the local engine's process", () => {
  it('a ProviderError keeps its class, kind, retryability, status, Retry-After and cause', () => {
    const original = new ProviderError('busy', 'local engine busy', {
      retryable: true,
      status: 503,
      retryAfterMs: 250,
      cause: new RangeError('pool full'),
    });
    const back = fromWireError(structuredClone(toWireError(original)));
    assert.ok(back instanceof ProviderError);
    assert.equal(back.kind, 'busy');
    assert.equal(back.message, 'local engine busy');
    assert.equal(back.retryable, true);
    assert.equal(back.status, 503);
    assert.equal(back.retryAfterMs, 250);
    assert.equal(back.stack, original.stack, 'the stack of where it was thrown');
    assert.ok(back.cause instanceof Error);
    assert.equal(back.cause.name, 'RangeError');
    assert.equal(back.cause.message, 'pool full');
  });

  it('a bad-request stays not retryable; other errors and thrown values keep name and message', () => {
    const hopeless = fromWireError(toWireError(new ProviderError('bad-request', 'prompt too long')));
    assert.ok(hopeless instanceof ProviderError && hopeless.kind === 'bad-request' && !hopeless.retryable);
    const typeError = fromWireError(toWireError(new TypeError('x is not a function')));
    assert.ok(!(typeError instanceof ProviderError));
    assert.equal(typeError.name, 'TypeError');
    assert.equal(typeError.message, 'x is not a function');
    assert.equal(fromWireError(toWireError('a string was thrown')).message, 'a string was thrown');
  });

  it('a cycle of causes is cut instead of recursing forever', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    a.cause = b;
    let depth = 0;
    for (let wire = toWireError(a); wire.cause; wire = wire.cause) depth++;
    assert.ok(depth <= 4);
  });

  it('an error part after output has started is a ProviderError again', () => {
    const part = fromWirePart({ type: 'error', error: toWireError(new Error('decode failed')) });
    assert.ok(part.type === 'error' && part.error instanceof ProviderError && part.error.kind === 'upstream');
  });
});

/** The live child processes of `pid`: here, the engines this file's providers started. */
function childrenOf(pid: number): number[] {
  const found = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout;
  return found.split('\n').filter(Boolean).map(Number);
}

describe('the local engine in its own process (stories260K)', () => {
  let provider: LocalChatProvider;
  before(async () => {
    provider = new LocalChatProvider({ modelPath: TEST_MODEL, threads: 1, sequences: 1, maxQueue: 2 });
    await provider.load();
  });
  after(async () => {
    await provider.close();
  });

  it('a consumer that stops reading pauses the generation and keeps its sequence until it lets go', async () => {
    const reader = provider.stream(ask('Tell me a long story.'), never());
    assert.equal((await reader.next()).done, false);
    await new Promise((resolve) => setTimeout(resolve, 600)); // ~1,000 tokens' time at this model's speed
    assert.deepEqual(provider.queueState(), { active: 1, queued: 0 });
    // What the thread ran ahead is bounded: the rest of the answer is generated as it is read.
    // Reading to the end is letting go: the thread gives the sequence back before it ends the call. (The finish
    // part comes before that; under load the thread may not yet have given it back when the reader sees it.)
    let more = 0;
    for (let next = await reader.next(); !next.done; next = await reader.next()) {
      if (next.value.type === 'text-delta') more++;
    }
    assert.ok(more > 16, `the answer went on past the window after the pause (${more} more parts)`);
    assert.deepEqual(provider.queueState(), { active: 0, queued: 0 });
  });

  it('a consumer that returns early frees the sequence by the time return() resolves', async () => {
    const reader = provider.stream(ask('Tell me a long story.'), never());
    await reader.next();
    assert.equal(provider.queueState().active, 1);
    await reader.return(undefined);
    assert.deepEqual(provider.queueState(), { active: 0, queued: 0 });
    const answer = await provider.generate(ask('Another story.', { maxTokens: 20 }), never());
    assert.equal(answer.usage.completionTokens > 0, true);
  });

  it('a request aborted while it waits for a sequence leaves the queue at once, with the abort reason', async () => {
    const holder = provider.stream(ask('Tell me a long story.'), never());
    await holder.next();
    const controller = new AbortController();
    const waiting = provider.generate(ask('Wait for me.'), controller.signal);
    await until(() => provider.queueState().queued === 1, 'the second request is queued');
    const reason = new Error('the client went away');
    controller.abort(reason);
    await assert.rejects(waiting, (err: unknown) => err === reason);
    await until(() => provider.queueState().queued === 0, 'the queue is empty again');
    await holder.return(undefined);
  });

  it('an answer aborted while it is generated rejects with the reason, its sequence back in the pool', async () => {
    const controller = new AbortController();
    const answer = provider.generate(ask('Tell me a long story.', { maxTokens: 2000 }), controller.signal);
    await until(() => provider.queueState().active === 1, 'the answer holds the sequence');
    await turn();
    const reason = new Error('the client went away');
    const abortedAt = performance.now();
    controller.abort(reason);
    await assert.rejects(answer, (err: unknown) => err === reason);
    assert.ok(performance.now() - abortedAt < 100, 'ended within 100 ms of the abort');
    assert.deepEqual(provider.queueState(), { active: 0, queued: 0 });
  });

  it('a closed provider refuses further requests with a retryable upstream error', async () => {
    const closing = new LocalChatProvider({ modelPath: TEST_MODEL, sequences: 1 });
    await closing.load();
    await closing.close();
    assert.deepEqual(closing.queueState(), { active: 0, queued: 0 });
    await assert.rejects(
      closing.generate(ask('hi'), never()),
      (err: unknown) => err instanceof ProviderError && err.kind === 'upstream' && /is closed/.test(err.message),
    );
  });

  it('a killed engine fails its calls as retryable, and the next request starts another engine', async () => {
    const running = new Set(childrenOf(process.pid));
    const crashing = new LocalChatProvider({ modelPath: TEST_MODEL, sequences: 1 });
    try {
      const reader = crashing.stream(ask('Tell me a long story.'), never());
      await reader.next();
      const [engine, ...others] = childrenOf(process.pid).filter((pid) => !running.has(pid));
      assert.ok(engine !== undefined && others.length === 0, 'one new engine process');
      process.kill(engine, 'SIGKILL');
      await assert.rejects(
        (async () => {
          for (let next = await reader.next(); !next.done; next = await reader.next());
        })(),
        (err: unknown) =>
          err instanceof ProviderError && err.retryable && /engine process was killed/.test(err.message),
      );
      assert.deepEqual(crashing.queueState(), { active: 0, queued: 0 });
      const answer = await crashing.generate(ask('Another story.', { maxTokens: 10 }), never());
      assert.ok(answer.usage.completionTokens > 0);
    } finally {
      await crashing.close();
    }
  });

  it('the engine outlives a SIGTERM or SIGINT (its server drains) and exits when its provider closes', async () => {
    const running = new Set(childrenOf(process.pid));
    const draining = new LocalChatProvider({ modelPath: TEST_MODEL, sequences: 1 });
    await draining.load();
    const [engine] = childrenOf(process.pid).filter((pid) => !running.has(pid));
    assert.ok(engine !== undefined);
    const reader = draining.stream(ask('Tell me a long story.', { maxTokens: 60 }), never());
    await reader.next();
    process.kill(engine, 'SIGTERM');
    process.kill(engine, 'SIGINT');
    let parts = 1;
    for (let next = await reader.next(); !next.done; next = await reader.next()) parts++;
    assert.ok(parts > 10, `the stream went on to its end (${parts} parts)`);
    await draining.close();
    await until(() => !childrenOf(process.pid).includes(engine), 'the engine process has exited');
  });

  it("an idle engine process does not keep the server's process alive", () => {
    // A process that answers with the local engine and never closes it must still exit on its own.
    const script = `
      import { LocalChatProvider } from ${JSON.stringify(join(import.meta.dirname, '../../src/providers/local/index.ts'))};
      const provider = new LocalChatProvider({ modelPath: ${JSON.stringify(TEST_MODEL)}, sequences: 1 });
      const answer = await provider.generate(
        { model: 'stories', messages: [{ role: 'user', content: 'hi' }], maxTokens: 5, temperature: 0 },
        new AbortController().signal,
      );
      console.log('tokens', answer.usage.completionTokens);
    `;
    const dir = mkdtempSync(join(tmpdir(), 'pvai-engine-process-'));
    const file = join(dir, 'answer-once.mts');
    writeFileSync(file, script);
    const child = spawnSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8', timeout: 60_000 });
    rmSync(dir, { recursive: true, force: true });
    assert.equal(child.signal, null, `exited on its own (stderr: ${child.stderr})`);
    assert.equal(child.status, 0, child.stderr);
    assert.match(child.stdout, /tokens [1-5]/);
  });
});
