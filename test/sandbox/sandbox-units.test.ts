import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors/index.js';
import { buildBwrapArgs, type SandboxLaunchSpec } from '../../src/sandbox/bwrap-args.js';
import { resolveSandboxConfig } from '../../src/sandbox/config.js';
import { DEFAULT_SANDBOX_CONFIG } from '../../src/sandbox/index.js';
import { CappedOutput, utf8BoundaryAtOrBefore } from '../../src/sandbox/output-buffer.js';
import { FairQueue } from '../../src/sandbox/queue.js';

describe('CappedOutput', () => {
  it('keeps output under the cap untouched', () => {
    const output = new CappedOutput(10);
    output.append(Buffer.from('abc'));
    output.append(Buffer.from('def'));
    assert.equal(output.text(), 'abcdef');
  });

  it('keeps exactly the cap and appends the marker', () => {
    const output = new CappedOutput(4);
    output.append(Buffer.from('ab'));
    output.append(Buffer.from('cdef'));
    output.append(Buffer.from('ghi'));
    assert.equal(output.text(), 'abcd\n[output truncated at 4 bytes]');
  });

  it('finds UTF-8 character boundaries', () => {
    const euro = Buffer.from('a€'); // 61 e2 82 ac
    assert.equal(utf8BoundaryAtOrBefore(euro, 4), 4);
    assert.equal(utf8BoundaryAtOrBefore(euro, 3), 1);
    assert.equal(utf8BoundaryAtOrBefore(euro, 2), 1);
    assert.equal(utf8BoundaryAtOrBefore(euro, 1), 1);
    const emoji = Buffer.from('🎉'); // 4 bytes
    assert.equal(utf8BoundaryAtOrBefore(emoji, 4), 4);
    assert.equal(utf8BoundaryAtOrBefore(emoji, 3), 0);
  });
});

const isAppError =
  (code: string) =>
  (error: unknown): boolean =>
    error instanceof AppError && error.code === code;

/** Resolves on the next turn of the event loop, after every grant that a release made has been delivered. */
const settled = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('FairQueue', () => {
  const limits = { maxConcurrent: 4, maxQueue: 8, maxConcurrentPerAccount: 2, maxQueuePerAccount: 3 };

  it('caps one account at its share even while other slots are idle, and refuses its overflow as ACCOUNT_BUSY', async () => {
    const queue = new FairQueue(limits);
    await queue.acquire('flood');
    await queue.acquire('flood');
    const waiting = [queue.acquire('flood'), queue.acquire('flood'), queue.acquire('flood')];
    assert.equal(queue.activeCount, 2, 'two slots stay free for other accounts');
    await assert.rejects(queue.acquire('flood'), (error: unknown) => {
      assert.ok(isAppError('ACCOUNT_BUSY')(error));
      const appError = error as AppError;
      assert.match(appError.message, /Your account's share/);
      assert.deepEqual(appError.details, { running: 2, queued: 3, max_running: 2, max_queued: 3 });
      return true;
    });
    // Another account is not affected by the flood: it starts at once.
    const other = await queue.acquire('other');
    assert.equal(queue.activeCount, 3);
    other();
    assert.equal(waiting.length, 3);
  });

  it('answers SERVER_BUSY when the server-wide line is full, naming the server, not the caller', async () => {
    const queue = new FairQueue({ maxConcurrent: 1, maxQueue: 2, maxConcurrentPerAccount: 1, maxQueuePerAccount: 2 });
    await queue.acquire('a');
    void queue.acquire('b');
    void queue.acquire('c');
    await assert.rejects(queue.acquire('d'), (error: unknown) => {
      assert.ok(isAppError('SERVER_BUSY')(error));
      assert.match((error as AppError).message, /at capacity/);
      return true;
    });
  });

  it('serves waiting accounts round-robin, not first-come-first-served', async () => {
    const queue = new FairQueue({ maxConcurrent: 1, maxQueue: 16, maxConcurrentPerAccount: 1, maxQueuePerAccount: 8 });
    const order: string[] = [];
    const first = await queue.acquire('a');
    const calls: Promise<void>[] = [];
    const enqueue = (account: string, label: string): void => {
      calls.push(
        queue.acquire(account).then((release) => {
          order.push(label);
          release();
        }),
      );
    };
    for (let index = 1; index <= 4; index += 1) enqueue('a', `a${index}`);
    enqueue('b', 'b1');
    enqueue('c', 'c1');
    enqueue('b', 'b2');
    first();
    await Promise.all(calls);
    assert.deepEqual(order, ['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
  });

  it('hands a freed slot to an account under its cap, skipping one at its cap', async () => {
    const queue = new FairQueue({ maxConcurrent: 3, maxQueue: 8, maxConcurrentPerAccount: 2, maxQueuePerAccount: 4 });
    const a1 = await queue.acquire('a');
    await queue.acquire('a');
    const b1 = await queue.acquire('b');
    let aWaiting = false;
    let bWaiting = false;
    void queue.acquire('a').then(() => {
      aWaiting = true;
    });
    void queue.acquire('b').then(() => {
      bWaiting = true;
    });
    b1();
    await settled();
    assert.equal(bWaiting, true, 'b got the slot b freed');
    assert.equal(aWaiting, false, 'a is at its cap of 2, so it waits although it queued first');
    a1();
    await settled();
    assert.equal(aWaiting, true);
  });

  it('takes an aborted caller out of the line and frees the slot once however often it is released', async () => {
    const queue = new FairQueue({ maxConcurrent: 1, maxQueue: 1, maxConcurrentPerAccount: 1, maxQueuePerAccount: 1 });
    const release = await queue.acquire('a');
    const controller = new AbortController();
    const aborted = queue.acquire('b', controller.signal);
    controller.abort();
    await assert.rejects(aborted, (error: unknown) => error instanceof Error && error.name === 'AbortError');
    assert.equal(queue.queuedCount, 0);
    const next = queue.acquire('c');
    release();
    release(); // releasing twice must not free a second slot
    (await next)();
    assert.equal(queue.activeCount, 0);
    assert.equal(queue.queuedCount, 0);
  });
});

describe('sandbox config', () => {
  it('fills defaults and keeps them for undefined overrides', () => {
    const config = resolveSandboxConfig({ poolSize: 0, maxQueue: undefined });
    assert.equal(config.poolSize, 0);
    assert.equal(config.maxQueue, DEFAULT_SANDBOX_CONFIG.maxQueue);
    assert.equal(config.pythonPath, '/usr/bin/python3');
  });

  it('derives the per-account shares from the server-wide limits unless they are set', () => {
    const defaults = resolveSandboxConfig();
    assert.deepEqual([defaults.maxConcurrentPerAccount, defaults.maxQueuePerAccount], [2, 8]);
    const larger = resolveSandboxConfig({ maxConcurrent: 9, maxQueue: 10 });
    assert.deepEqual([larger.maxConcurrentPerAccount, larger.maxQueuePerAccount], [4, 3]);
    const single = resolveSandboxConfig({ maxConcurrent: 1, maxQueue: 0 });
    assert.deepEqual([single.maxConcurrentPerAccount, single.maxQueuePerAccount], [1, 0]);
    const set = resolveSandboxConfig({ maxConcurrent: 8, maxConcurrentPerAccount: 8, maxQueuePerAccount: 0 });
    assert.deepEqual([set.maxConcurrentPerAccount, set.maxQueuePerAccount], [8, 0]);
  });

  it('rejects nonsensical limits', () => {
    assert.throws(() => resolveSandboxConfig({ maxConcurrentPerAccount: 5 }), RangeError); // above maxConcurrent
    assert.throws(() => resolveSandboxConfig({ maxQueuePerAccount: 33 }), RangeError); // above maxQueue
    assert.throws(() => resolveSandboxConfig({ maxOpenFiles: 3 }), RangeError);
    assert.throws(() => resolveSandboxConfig({ maxConcurrent: 0 }), RangeError);
    assert.throws(() => resolveSandboxConfig({ memoryLimitMb: 1.5 }), RangeError);
    assert.throws(() => resolveSandboxConfig({ bwrapPath: '' }), TypeError);
  });
});

describe('bwrap command line', () => {
  const spec: SandboxLaunchSpec = {
    bwrapPath: '/usr/bin/bwrap',
    pythonPath: '/usr/bin/python3',
    rootEntries: [
      { path: '/lib', kind: 'symlink', target: 'usr/lib' },
      { path: '/lib64', kind: 'directory' },
    ],
    memoryBytes: 1,
    fileSizeBytes: 2,
    workDirBytes: 3,
    workDirMaxFiles: 6,
    maxProcesses: 4,
    maxOpenFiles: 7,
    errorLimitChars: 5,
  };
  const args = buildBwrapArgs(spec);
  const joined = args.join(' ');

  it('unshares every namespace and drops privileges', () => {
    for (const flag of [
      '--unshare-user',
      '--unshare-pid',
      '--unshare-net',
      '--unshare-ipc',
      '--unshare-uts',
      '--disable-userns',
      '--die-with-parent',
      '--new-session',
      '--clearenv',
      '--as-pid-1',
    ]) {
      assert.ok(args.includes(flag), flag);
    }
    assert.match(joined, /--uid 65534 --gid 65534/);
    // The one capability kept is for the wrapper's work-dir mount, which drops it before reading code.
    assert.match(joined, /--cap-drop ALL --cap-add CAP_SYS_ADMIN/);
  });

  it('mounts only /usr from the host, read-only, plus the root links', () => {
    assert.match(joined, /--ro-bind \/usr \/usr/);
    assert.match(joined, /--symlink usr\/lib \/lib/);
    assert.match(joined, /--ro-bind \/lib64 \/lib64/);
    // Nothing of bwrap's is writable: / and /dev are remounted read-only after setup, /work is the wrapper's.
    assert.match(joined, /--dev \/dev --remount-ro \/dev/);
    assert.match(joined, /--symlink work \/tmp --remount-ro \/ /);
    assert.doesNotMatch(joined, /--tmpfs/);
    const hostSources = args.flatMap((arg, index) => (arg.endsWith('bind') ? [args[index + 1]] : []));
    assert.deepEqual(hostSources, ['/usr', '/lib64']);
  });

  it('passes the limits to the wrapper', () => {
    assert.deepEqual(JSON.parse(args.at(-1) ?? ''), {
      memoryBytes: 1,
      fileSizeBytes: 2,
      workDirBytes: 3,
      workDirMaxFiles: 6,
      maxProcesses: 4,
      maxOpenFiles: 7,
      errorLimitChars: 5,
    });
  });
});
