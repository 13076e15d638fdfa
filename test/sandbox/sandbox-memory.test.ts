import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CodeRunner, createSandbox, type ExecutionOutcome } from '../../src/sandbox/index.js';
import { sandboxHostSkip } from '../support/sandbox-host.js';

/**
 * Memory is capped for the execution as a whole: it is one process (nothing can be forked), its threads share
 * one RLIMIT_AS, and every place that would hold memory outside that limit is closed or bounded.
 */

const MIB = 1024 * 1024;

function completed(outcome: ExecutionOutcome): Extract<ExecutionOutcome, { kind: 'completed' }> {
  assert.equal(outcome.kind, 'completed', JSON.stringify(outcome));
  if (outcome.kind !== 'completed') throw new Error('unreachable');
  return outcome;
}

describe('sandbox: memory of the execution as a whole', { skip: sandboxHostSkip() }, () => {
  let sandbox: CodeRunner;
  before(() => {
    sandbox = createSandbox({ poolSize: 2 });
  });
  after(async () => {
    await sandbox.close();
  });
  const run = (code: string) => sandbox.execute({ code, timeoutSeconds: 10, accountId: 'attacker' });

  it('turns a memory bomb into MemoryError', async () => {
    const result = completed(await run('hoard = []\nwhile True:\n    hoard.append(bytearray(8 * 1024 * 1024))'));
    assert.match(result.error ?? '', /MemoryError/);
  });

  it('gives eight allocating threads one limit between them, not one each', async () => {
    const code = [
      'import threading',
      'held = []',
      'all_started = threading.Barrier(8)  # every thread has its stack before any of them hoards',
      'def hoard():',
      '    all_started.wait()',
      '    try:',
      '        while True:',
      '            held.append(bytearray(16 * 1024 * 1024))',
      '    except MemoryError:',
      '        pass',
      'threads = [threading.Thread(target=hoard) for _ in range(8)]',
      'for thread in threads: thread.start()',
      'for thread in threads: thread.join()',
      'total = len(held) * 16',
      'held.clear()  # printing needs memory too',
      'print(total)',
    ].join('\n');
    const result = completed(await run(code));
    assert.equal(result.error, null);
    const heldMib = Number(result.output.trim());
    // memoryLimitMb is 256, and the interpreter and eight thread stacks take their part of it.
    assert.ok(heldMib >= 64 && heldMib < 256, `the threads held ${heldMib} MiB`);
  });

  it('has no writable place outside the capped work dir, and no shm, memfd or System V segment', async () => {
    const code = [
      'import ctypes, errno, os',
      'from multiprocessing import shared_memory',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'def probe(name, attempt):',
      '    try:',
      '        attempt()',
      '        print("HELD", name)',
      '    except OSError as exc:',
      '        print("refused", name, errno.errorcode.get(exc.errno, exc.errno))',
      'def native(call):',
      '    def attempt():',
      '        if call() == -1:',
      '            raise OSError(ctypes.get_errno(), "")',
      '    return attempt',
      'for path in ("/big", "/dev/big", "/dev/shm/big", "/tmp/../big"):',
      '    probe(path, lambda: open(path, "wb").write(b"x" * 1024))',
      'probe("shared_memory", lambda: shared_memory.SharedMemory(create=True, size=64 << 20))',
      'probe("memfd_create", lambda: os.memfd_create("hoard"))',
      'IPC_PRIVATE, IPC_CREAT = 0, 0o1000',
      'probe("shmget", native(lambda: libc.shmget(IPC_PRIVATE, 64 << 20, IPC_CREAT | 0o600)))',
      'probe("msgget", native(lambda: libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)))',
      'probe("semget", native(lambda: libc.semget(IPC_PRIVATE, 1, IPC_CREAT | 0o600)))',
      'probe("io_uring_setup", native(lambda: libc.syscall(425, 8, ctypes.create_string_buffer(120))))',
      'probe("userfaultfd", native(lambda: libc.syscall(323, 0)))',
    ].join('\n');
    const result = completed(await run(code));
    assert.equal(
      result.output,
      [
        'refused /big EROFS',
        'refused /dev/big EROFS',
        'refused /dev/shm/big EROFS',
        'refused /tmp/../big EROFS',
        'refused shared_memory EROFS',
        'refused memfd_create EPERM',
        'refused shmget EPERM',
        'refused msgget EPERM',
        'refused semget EPERM',
        'refused io_uring_setup EPERM',
        'refused userfaultfd EPERM',
        '',
      ].join('\n'),
    );
  });

  it('bounds kernel buffers: Unix sockets only, at their default size, and at most 64 open files', async () => {
    const code = [
      'import errno, fcntl, os, socket',
      'def probe(name, attempt):',
      '    try:',
      '        attempt()',
      '        print("allowed", name)',
      '    except OSError as exc:',
      '        print("refused", name, errno.errorcode.get(exc.errno, exc.errno))',
      'for family in ("AF_INET", "AF_INET6", "AF_PACKET", "AF_NETLINK"):',
      '    probe(family, lambda: socket.socket(getattr(socket, family), socket.SOCK_DGRAM))',
      'left, right = socket.socketpair()',
      'probe("AF_UNIX pair", lambda: None)',
      "# SO_SNDBUFFORCE (32) and SO_RCVBUFFORCE (33) have no name in Python's socket module.",
      'for option, number in (("SO_SNDBUF", 7), ("SO_RCVBUF", 8), ("SO_SNDBUFFORCE", 32), ("SO_RCVBUFFORCE", 33)):',
      '    probe(option, lambda: left.setsockopt(socket.SOL_SOCKET, number, 1 << 30))',
      'read_end, write_end = os.pipe()',
      'probe("F_SETPIPE_SZ", lambda: fcntl.fcntl(write_end, 1031, 1 << 20))',
      'pinned, pairs = 0, []',
      'try:',
      '    while True:',
      '        a, b = socket.socketpair()',
      '        pairs.append((a, b))',
      '        for end in (a, b):',
      '            end.setblocking(False)',
      '            try:',
      '                while True:',
      '                    pinned += end.send(bytes(65536))',
      '            except BlockingIOError:',
      '                pass',
      'except OSError as exc:',
      '    print("stopped", errno.errorcode[exc.errno], "with", len(pairs), "pairs holding", pinned >> 20, "MiB")',
    ].join('\n');
    const result = completed(await run(code));
    const lines = result.output.trim().split('\n');
    const stopped = /^stopped EMFILE with (\d+) pairs holding (\d+) MiB$/.exec(lines.pop() ?? '');
    assert.deepEqual(lines, [
      'refused AF_INET EPERM',
      'refused AF_INET6 EPERM',
      'refused AF_PACKET EPERM',
      'refused AF_NETLINK EPERM',
      'allowed AF_UNIX pair',
      'refused SO_SNDBUF EPERM',
      'refused SO_RCVBUF EPERM',
      'refused SO_SNDBUFFORCE EPERM',
      'refused SO_RCVBUFFORCE EPERM',
      'refused F_SETPIPE_SZ EPERM',
    ]);
    assert.ok(stopped !== null, result.output);
    // Measured before the filter: 64 open files of Unix socket pairs held 470 MiB, of loopback TCP 640 MiB.
    assert.ok(Number(stopped[1]) < 32 && Number(stopped[2]) * MIB < 24 * MIB, result.output);
  });

  it('caps the number of files in the work dir, not only their bytes', async () => {
    const code = [
      'import os',
      'made = 0',
      'try:',
      '    while True:',
      '        (os.mkdir if made % 2 else os.mknod)("entry-%d" % made)',
      '        made += 1',
      'except OSError as exc:',
      '    print(made, exc.strerror)',
    ].join('\n');
    const result = completed(await run(code));
    // workDirMaxFiles is 4096 inodes, the work dir itself being one. Before, 439,000 empty directories in
    // 3 s fitted in the 16 MiB tmpfs and took ~800 MB of kernel memory.
    assert.equal(result.output, '4095 No space left on device\n');
  });
});
