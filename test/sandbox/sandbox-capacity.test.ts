import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors/index.js';
import { createSandbox } from '../../src/sandbox/index.js';
import { eventually } from '../support/eventually.js';
import { hostProcessesMentioning, hostTasksNamed, sandboxHostSkip } from '../support/sandbox-host.js';

function isAppError(code: string): (error: unknown) => boolean {
  return (error) => error instanceof AppError && error.code === code;
}

describe('sandbox: concurrency, queueing and availability', { skip: sandboxHostSkip() }, () => {
  it('runs 20 concurrent executions of 4 accounts, each with its own output', async () => {
    const sandbox = createSandbox({ poolSize: 2, maxConcurrent: 4, maxQueue: 32 });
    try {
      const runs = Array.from({ length: 20 }, (_, index) =>
        sandbox.execute({
          code: `import time\ntime.sleep(0.02)\nprint(${index} * 7, "call-${index}")`,
          timeoutSeconds: 10,
          accountId: `acct-${index % 4}`,
        }),
      );
      const outcomes = await Promise.all(runs);
      outcomes.forEach((outcome, index) => {
        assert.deepEqual(outcome.kind === 'completed' ? [outcome.output, outcome.error] : outcome, [
          `${index * 7} call-${index}\n`,
          null,
        ]);
      });
    } finally {
      await sandbox.close();
    }
  });

  it('rejects with SERVER_BUSY once the queue is full, and serves the queued call in turn', async () => {
    const sandbox = createSandbox({ poolSize: 0, maxConcurrent: 1, maxQueue: 1 });
    try {
      const code = 'import time\ntime.sleep(0.5)\nprint("first")';
      const running = sandbox.execute({ code, timeoutSeconds: 5, accountId: 'a' });
      const queued = sandbox.execute({ code: 'print("second")', timeoutSeconds: 5, accountId: 'b' });
      const started = performance.now();
      const third = sandbox.execute({ code: 'print("third")', timeoutSeconds: 5, accountId: 'c' });
      await assert.rejects(third, isAppError('SERVER_BUSY'));
      assert.ok(performance.now() - started < 100, 'rejected at once, not after waiting');
      assert.equal((await running).output, 'first\n');
      assert.equal((await queued).output, 'second\n');
    } finally {
      await sandbox.close();
    }
  });

  it("one account flooding the sandbox does not delay another account's execution", async () => {
    // Four slots and six sleeps of one account: without a fair share, another account's print(1) waited 7 s.
    const sandbox = createSandbox({ poolSize: 2, maxConcurrent: 4 });
    try {
      const flood = Array.from({ length: 6 }, () =>
        sandbox.execute({ code: 'import time\ntime.sleep(1.5)', timeoutSeconds: 5, accountId: 'flood' }),
      );
      await new Promise((resolve) => setTimeout(resolve, 100)); // the flood holds its share
      const started = performance.now();
      const other = await sandbox.execute({ code: 'print(1)', timeoutSeconds: 5, accountId: 'other' });
      const waited = performance.now() - started;
      assert.equal(other.output, '1\n');
      assert.ok(waited < 1000, `the other account waited ${Math.round(waited)} ms behind the flood`);
      const outcomes = await Promise.all(flood);
      assert.ok(outcomes.every((outcome) => outcome.kind === 'completed' && outcome.error === null));
    } finally {
      await sandbox.close();
    }
  });

  it('serves accounts in turn, so a third account waits one round, not behind two backlogs', async () => {
    const sandbox = createSandbox({ poolSize: 0, maxConcurrent: 2, maxQueue: 32 });
    try {
      const sleep = { code: 'import time\ntime.sleep(0.4)', timeoutSeconds: 5 };
      const backlogs = ['a', 'b'].flatMap((accountId) =>
        Array.from({ length: 5 }, () => sandbox.execute({ ...sleep, accountId })),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = performance.now();
      await sandbox.execute({ code: 'print(1)', timeoutSeconds: 5, accountId: 'c' });
      const waited = performance.now() - started;
      // FIFO would put c behind all ten sleeps (about 2 s on two slots); in turn it waits for one round.
      assert.ok(waited < 1500, `c waited ${Math.round(waited)} ms`);
      await Promise.all(backlogs);
    } finally {
      await sandbox.close();
    }
  });

  it("answers ACCOUNT_BUSY, saying it is the caller's own share, while other accounts still get in", async () => {
    const sandbox = createSandbox({ poolSize: 0, maxConcurrent: 4, maxQueue: 32, maxQueuePerAccount: 2 });
    try {
      const sleep = { code: 'import time\ntime.sleep(0.5)', timeoutSeconds: 5, accountId: 'greedy' };
      const accepted = Array.from({ length: 4 }, () => sandbox.execute(sleep)); // 2 running, 2 waiting
      const started = performance.now();
      await assert.rejects(sandbox.execute(sleep), (error: unknown) => {
        assert.ok(isAppError('ACCOUNT_BUSY')(error), String(error));
        assert.match(String(error), /Your account's share of code execution is full/);
        return true;
      });
      assert.ok(performance.now() - started < 100, 'rejected at once, not after waiting');
      const other = await sandbox.execute({ code: 'print("in")', timeoutSeconds: 5, accountId: 'modest' });
      assert.equal(other.output, 'in\n');
      assert.equal((await Promise.all(accepted)).length, 4);
    } finally {
      await sandbox.close();
    }
  });

  it('kills the execution when the caller aborts, leaving no process or thread behind', async () => {
    const sandbox = createSandbox({ poolSize: 1 });
    const marker = `pvai-${randomUUID().slice(0, 8)}`;
    try {
      const controller = new AbortController();
      const code = [
        'import ctypes, threading, time',
        'def named_sleeper():',
        `    ctypes.CDLL(None).prctl(15, b"${marker}")`,
        '    time.sleep(30)',
        'threading.Thread(target=named_sleeper).start()',
        'named_sleeper()',
      ].join('\n');
      const running = sandbox.execute({ code, timeoutSeconds: 10, accountId: 'acct' }, controller.signal);
      let seen = 0;
      for (let attempt = 0; attempt < 100 && seen < 2; attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        seen = hostTasksNamed(marker).length;
      }
      assert.equal(seen, 2, 'the code was running, in two threads');
      const started = performance.now();
      controller.abort();
      await assert.rejects(running, (error: unknown) => error instanceof Error && error.name === 'AbortError');
      assert.ok(performance.now() - started < 1000);
      // Killed threads leave within milliseconds, not all in the same instant as the pipes close.
      const left = await eventually(
        async () => hostTasksNamed(marker),
        (tasks) => tasks.length === 0,
        500,
      );
      assert.deepEqual(left, []);
    } finally {
      await sandbox.close();
    }
  });

  it('leaves a queued call that is aborted out of the line', async () => {
    const sandbox = createSandbox({ poolSize: 0, maxConcurrent: 1, maxQueue: 1 });
    try {
      const running = sandbox.execute({ code: 'import time\ntime.sleep(0.3)', timeoutSeconds: 5, accountId: 'acct' });
      const controller = new AbortController();
      const queued = sandbox.execute(
        { code: 'print("never")', timeoutSeconds: 5, accountId: 'acct' },
        controller.signal,
      );
      controller.abort();
      await assert.rejects(queued, (error: unknown) => error instanceof Error && error.name === 'AbortError');
      // The slot in the line is free again.
      const next = sandbox.execute({ code: 'print("next")', timeoutSeconds: 5, accountId: 'acct' });
      await running;
      assert.equal((await next).output, 'next\n');
    } finally {
      await sandbox.close();
    }
  });

  it('throws SANDBOX_UNAVAILABLE with install instructions when bwrap is missing, and never runs unsandboxed', async () => {
    const sandbox = createSandbox({ bwrapPath: '/nonexistent/bwrap' });
    try {
      await assert.rejects(
        sandbox.execute({ code: 'print(1)', timeoutSeconds: 2, accountId: 'acct' }),
        (error: unknown) =>
          isAppError('SANDBOX_UNAVAILABLE')(error) && /apt-get install bubblewrap/.test(String(error)),
      );
      const health = await sandbox.health();
      assert.equal(health.ok, false);
      assert.match(health.detail, /bubblewrap not found/);
    } finally {
      await sandbox.close();
    }
  });

  it('throws SANDBOX_UNAVAILABLE when the interpreter is missing', async () => {
    const sandbox = createSandbox({ pythonPath: '/nonexistent/python3' });
    try {
      await assert.rejects(
        sandbox.execute({ code: 'print(1)', timeoutSeconds: 2, accountId: 'acct' }),
        isAppError('SANDBOX_UNAVAILABLE'),
      );
      assert.equal((await sandbox.health()).ok, false);
    } finally {
      await sandbox.close();
    }
  });

  it('throws SANDBOX_UNAVAILABLE when bwrap exists but cannot start a sandbox', async () => {
    // /usr/bin/false is executable but exits at once, as a bwrap refused by the kernel would.
    const sandbox = createSandbox({ bwrapPath: '/usr/bin/false', poolSize: 1 });
    try {
      await assert.rejects(
        sandbox.execute({ code: 'print(1)', timeoutSeconds: 2, accountId: 'acct' }),
        isAppError('SANDBOX_UNAVAILABLE'),
      );
      assert.equal((await sandbox.health()).ok, false);
    } finally {
      await sandbox.close();
    }
  });

  it('rejects an invalid timeout', async () => {
    const sandbox = createSandbox({ poolSize: 0 });
    try {
      await assert.rejects(
        sandbox.execute({ code: 'print(1)', timeoutSeconds: 0, accountId: 'acct' }),
        isAppError('INVALID_PARAMETER'),
      );
    } finally {
      await sandbox.close();
    }
  });

  it('leaves no sandbox process behind after close()', async () => {
    const sandbox = createSandbox({ poolSize: 3 });
    await sandbox.execute({ code: 'print(1)', timeoutSeconds: 2, accountId: 'acct' });
    await new Promise((resolve) => setTimeout(resolve, 200)); // let the pool refill
    const pools = (): number[] =>
      hostProcessesMentioning('_pvai_main').filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/status`, 'utf8').includes(`PPid:\t${process.pid}\n`);
        } catch {
          return false;
        }
      });
    assert.equal(pools().length, 3, 'three warm sandboxes are children of this process');
    await sandbox.close();
    assert.deepEqual(pools(), []);
  });
});
