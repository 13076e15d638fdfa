import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors/index.js';
import { buildBwrapArgs, type SandboxLaunchSpec } from '../../src/sandbox/bwrap-args.js';
import { resolveSandboxConfig } from '../../src/sandbox/config.js';
import { DEFAULT_SANDBOX_CONFIG } from '../../src/sandbox/index.js';
import { CappedOutput, utf8BoundaryAtOrBefore } from '../../src/sandbox/output-buffer.js';
import { ConcurrencyLimiter } from '../../src/sandbox/queue.js';

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

describe('ConcurrencyLimiter', () => {
  it('admits up to maxConcurrent, queues FIFO up to maxQueue, then rejects with SERVER_BUSY', async () => {
    const limiter = new ConcurrencyLimiter(2, 2);
    const first = await limiter.acquire();
    const second = await limiter.acquire();
    const order: string[] = [];
    const third = limiter.acquire().then((release) => {
      order.push('third');
      return release;
    });
    const fourth = limiter.acquire().then((release) => {
      order.push('fourth');
      return release;
    });
    await assert.rejects(
      limiter.acquire(),
      (error: unknown) => error instanceof AppError && error.code === 'SERVER_BUSY',
    );
    assert.equal(limiter.queuedCount, 2);
    first();
    first(); // releasing twice must not free a second slot
    (await third)();
    second();
    (await fourth)();
    assert.deepEqual(order, ['third', 'fourth']);
    assert.equal(limiter.activeCount, 0);
  });
});

describe('sandbox config', () => {
  it('fills defaults and keeps them for undefined overrides', () => {
    const config = resolveSandboxConfig({ poolSize: 0, maxQueue: undefined });
    assert.equal(config.poolSize, 0);
    assert.equal(config.maxQueue, DEFAULT_SANDBOX_CONFIG.maxQueue);
    assert.equal(config.pythonPath, '/usr/bin/python3');
  });

  it('rejects nonsensical limits', () => {
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
    maxProcesses: 4,
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
    ]) {
      assert.ok(args.includes(flag), flag);
    }
    assert.match(joined, /--uid 65534 --gid 65534/);
  });

  it('mounts only /usr from the host, read-only, plus the root links', () => {
    assert.match(joined, /--ro-bind \/usr \/usr/);
    assert.match(joined, /--symlink usr\/lib \/lib/);
    assert.match(joined, /--ro-bind \/lib64 \/lib64/);
    assert.match(joined, /--size 3 --tmpfs \/work/);
    const hostSources = args.flatMap((arg, index) => (arg.endsWith('bind') ? [args[index + 1]] : []));
    assert.deepEqual(hostSources, ['/usr', '/lib64']);
  });

  it('passes the limits to the wrapper', () => {
    assert.deepEqual(JSON.parse(args.at(-1) ?? ''), {
      memoryBytes: 1,
      fileSizeBytes: 2,
      maxProcesses: 4,
      errorLimitChars: 5,
    });
  });
});
