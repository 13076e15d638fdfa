import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type CodeRunner, createSandbox, type ExecutionOutcome } from '../../src/sandbox/index.js';
import { eventually } from '../support/eventually.js';
import { hostTasksNamed, sandboxHostSkip } from '../support/sandbox-host.js';

/**
 * No subprocesses: every way an attacker has to start a process or a program is refused with a Python
 * error, threads keep working, and nothing the code starts outlives its execution.
 */

/** Python: `code` as machine code in executable memory, callable as `int f(void)` (rax is the result). */
const MACHINE_CODE = [
  'def machine_code(code):',
  '    memory = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)',
  '    memory.write(bytes(code))',
  '    kept.append(memory)',
  '    return ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(memory)))',
].join('\n');

/** `mov eax, 20; int 0x80; ret`: getpid through the i386 syscall table, harmless where it works. */
const I386_GETPID = [0xb8, 0x14, 0, 0, 0, 0xcd, 0x80, 0xc3];
/** `mov eax, 2; int 0x80; ret`: fork through the i386 table, numbered differently from x86-64's, a classic way around a filter. */
const I386_FORK = [0xb8, 0x02, 0, 0, 0, 0xcd, 0x80, 0xc3];

/** Whether this kernel runs i386 syscalls (`int 0x80`) at all; without IA32 emulation it is a SIGSEGV. */
function hostRunsI386Syscalls(): boolean {
  const probe = ['import ctypes, mmap', 'kept = []', MACHINE_CODE, `machine_code(${JSON.stringify(I386_GETPID)})()`];
  return spawnSync('/usr/bin/python3', ['-c', probe.join('\n')], { stdio: 'ignore' }).status === 0;
}

/** Each probe prints `refused NAME ExceptionType ERRNO`, or RAN / FAILED when it was not refused as it should be. */
function processProbes(includeI386: boolean): string {
  return [
    'import asyncio, ctypes, errno, glob, mmap, multiprocessing, os, pty, subprocess, sys',
    'from concurrent.futures import ProcessPoolExecutor',
    'kept = []',
    MACHINE_CODE,
    'libc = ctypes.CDLL(None, use_errno=True)',
    'SH = ["/bin/sh", "-c", "touch /work/ran-$$"]',
    'def probe(name, attempt):',
    '    try:',
    '        value = attempt()',
    '    except OSError as exc:',
    '        print("refused", name, type(exc).__name__, errno.errorcode.get(exc.errno, exc.errno))',
    '    except BaseException as exc:',
    '        print("FAILED", name, type(exc).__name__, exc)',
    '    else:',
    '        print("RAN", name, value)',
    'def native(call, forks=False):',
    '    def attempt():',
    '        ctypes.set_errno(0)',
    '        result = call()',
    '        if result < 0:',
    '            code = ctypes.get_errno() or -result  # raw machine code returns -errno itself',
    '            raise OSError(code, os.strerror(code))',
    '        if forks and result == 0:  # a child got through: leave a trace and vanish',
    '            open("/work/ran-child-%d" % os.getpid(), "w").close()',
    '            os._exit(0)',
    '        return result',
    '    return attempt',
    'def shell_status(status):',
    '    if status == 127 << 8:  # the shell never started',
    '        raise OSError(errno.EPERM, "shell did not start")',
    '    return status',
    'probe("os.system", lambda: os.system("touch /work/ran-system"))',
    'probe("os.popen", lambda: os.popen("touch /work/ran-popen").read())',
    'probe("subprocess.run", lambda: subprocess.run(SH))',
    'probe("subprocess.shell", lambda: subprocess.run("touch /work/ran-shell", shell=True))',
    'probe("os.fork", os.fork)',
    'probe("os.forkpty", os.forkpty)',
    'probe("pty.spawn", lambda: pty.spawn(SH))',
    'probe("os.execv", lambda: os.execv("/bin/sh", SH))',
    'probe("os.execve", lambda: os.execve(sys.executable, [sys.executable, "-c", "pass"], {}))',
    'probe("os.posix_spawn", lambda: os.posix_spawn("/bin/sh", SH, {}))',
    'probe("os.posix_spawnp", lambda: os.posix_spawnp("sh", SH, {}))',
    'probe("os.spawnv", lambda: os.spawnv(os.P_WAIT, "/bin/sh", SH))',
    'for method in ("fork", "spawn", "forkserver"):',
    '    context = multiprocessing.get_context(method)',
    '    probe("multiprocessing." + method, lambda: context.Process(target=print).start())',
    'probe("multiprocessing.Pool", lambda: multiprocessing.Pool(2))',
    'probe("ProcessPoolExecutor", lambda: ProcessPoolExecutor(2).submit(print).result())',
    'probe("asyncio.subprocess", lambda: asyncio.run(asyncio.create_subprocess_exec(*SH)))',
    'probe("libc.system", lambda: shell_status(libc.system(b"touch /work/ran-libc-system")))',
    'probe("libc.fork", native(libc.fork, forks=True))',
    'probe("libc.execv", native(lambda: libc.execv(b"/bin/sh", (ctypes.c_char_p * 2)(b"sh", None))))',
    'probe("syscall fork", native(lambda: libc.syscall(57), forks=True))',
    'probe("syscall vfork", native(lambda: libc.syscall(58), forks=True))',
    'SIGCHLD, CLONE_NEWUSER, CLONE_NEWPID = 17, 0x10000000, 0x20000000',
    'probe("syscall clone", native(lambda: libc.syscall(56, SIGCHLD, 0, 0, 0, 0), forks=True))',
    'probe("syscall clone+namespaces", native(lambda: libc.syscall(56, SIGCHLD | CLONE_NEWUSER | CLONE_NEWPID, 0, 0, 0, 0), forks=True))',
    'clone_args = (ctypes.c_uint64 * 11)(0, 0, 0, 0, SIGCHLD)  # struct clone_args: exit_signal is the 5th field',
    'probe("syscall clone3", native(lambda: libc.syscall(435, clone_args, ctypes.sizeof(clone_args)), forks=True))',
    'probe("syscall execve", native(lambda: libc.syscall(59, b"/bin/sh", (ctypes.c_char_p * 2)(b"sh", None), None)))',
    'probe("syscall execveat", native(lambda: libc.syscall(322, -100, b"/bin/sh", (ctypes.c_char_p * 2)(b"sh", None), None, 0)))',
    'X32 = 0x40000000',
    'probe("x32 fork", native(lambda: libc.syscall(X32 | 57), forks=True))',
    'probe("x32 execve", native(lambda: libc.syscall(X32 | 520, b"/bin/sh", None, None)))',
    ...(includeI386 ? [`probe("i386 fork", native(machine_code(${JSON.stringify(I386_FORK)}), forks=True))`] : []),
    'print("traces", sorted(glob.glob("/work/ran-*")))',
  ].join('\n');
}

function completed(outcome: ExecutionOutcome): Extract<ExecutionOutcome, { kind: 'completed' }> {
  assert.equal(outcome.kind, 'completed', JSON.stringify(outcome));
  if (outcome.kind !== 'completed') throw new Error('unreachable');
  return outcome;
}

describe('sandbox: no subprocesses, threads still work', { skip: sandboxHostSkip() }, () => {
  let sandbox: CodeRunner;
  before(() => {
    sandbox = createSandbox({ poolSize: 2 });
  });
  after(async () => {
    await sandbox.close();
  });
  const run = (code: string, timeoutSeconds = 10) => sandbox.execute({ code, timeoutSeconds, accountId: 'attacker' });

  it('refuses every way to start a process or a program, each with a Python error', async () => {
    const includeI386 = hostRunsI386Syscalls();
    const result = completed(await run(processProbes(includeI386)));
    assert.equal(result.error, null, result.output);
    const lines = result.output.trim().split('\n');
    const traces = lines.pop();
    assert.equal(traces, 'traces []', 'nothing the probes tried to run left a trace');
    assert.equal(lines.length, includeI386 ? 31 : 30, result.output);
    for (const line of lines) {
      // Pools need a semaphore in /dev/shm before they try to start anything; that is read-only.
      if (/^refused (multiprocessing\.Pool|ProcessPoolExecutor) /.test(line)) continue;
      const expected = line.startsWith('refused syscall clone3 ') ? 'OSError ENOSYS' : 'PermissionError EPERM';
      assert.ok(line.startsWith('refused ') && line.endsWith(` ${expected}`), `not refused as expected: ${line}`);
    }
    assert.match(result.output, /^refused ProcessPoolExecutor \w+Error/m);
  });

  it('says why os.system fails instead of returning a bare exit status', async () => {
    const result = completed(await run('import os\nos.system("ls")'));
    assert.match(result.error ?? '', /PermissionError: \[Errno 1\] subprocesses are not allowed in this sandbox: 'ls'/);
  });

  it('cannot undo its confinement: no capabilities, no new privileges, filters only stack', async () => {
    const code = [
      'import ctypes, errno, os, resource, seccomp',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)',
      'print(*(status[key].strip() for key in ("CapEff", "CapPrm", "NoNewPrivs", "Seccomp")))',
      'def outcome(result):',
      '    return "%d %s" % (result, errno.errorcode.get(ctypes.get_errno(), "-"))',
      '# A new user namespace would bring a full set of capabilities inside it (--disable-userns: ENOSPC).',
      'print("unshare", outcome(libc.unshare(0x10000000 | 0x00020000)))',
      'print("mount", outcome(libc.mount(b"tmpfs", b"/usr", b"tmpfs", 0, None)))',
      'try:',
      '    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))',
      '    print("LEAK raised RLIMIT_AS")',
      'except (ValueError, OSError) as exc:',
      '    print("rlimit", type(exc).__name__)',
      'seccomp.SyscallFilter(defaction=seccomp.ALLOW).load()  # a second, permissive filter',
      'try:',
      '    os.fork()',
      '    print("LEAK forked")',
      'except PermissionError:',
      '    print("fork still refused")',
    ].join('\n');
    const result = completed(await run(code));
    assert.equal(
      result.output,
      '0000000000000000 0000000000000000 1 2\nunshare -1 ENOSPC\nmount -1 EPERM\nrlimit ValueError\nfork still refused\n',
    );
  });

  it('runs and joins threads, and a thread pool', async () => {
    const code = [
      'import threading',
      'from concurrent.futures import ThreadPoolExecutor',
      'results = []',
      'lock = threading.Lock()',
      'def work(n):',
      '    total = sum(i * i for i in range(20000 + n))',
      '    with lock:',
      '        results.append(n)',
      '    return total',
      'threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]',
      'for thread in threads: thread.start()',
      'for thread in threads: thread.join()',
      'print(sorted(results), all(not thread.is_alive() for thread in threads))',
      'with ThreadPoolExecutor(4) as pool:',
      '    print(len(list(pool.map(work, range(12)))))',
    ].join('\n');
    const result = completed(await run(code));
    assert.deepEqual([result.output, result.error], ['[0, 1, 2, 3, 4, 5, 6, 7] True\n12\n', null]);
  });

  it('caps threads with RLIMIT_NPROC', async () => {
    const code = [
      'import threading, time',
      'started = 0',
      'for _ in range(64):',
      '    try:',
      '        threading.Thread(target=time.sleep, args=(3,), daemon=True).start()',
      '    except RuntimeError:',
      '        break',
      '    started += 1',
      'print("threads", started)',
    ].join('\n');
    const result = completed(await run(code, 2));
    const started = Number(/threads (\d+)/.exec(result.output)?.[1]);
    // maxProcesses is 16: the interpreter and 15 threads.
    assert.equal(started, 15, result.output);
  });

  it('turns a fork bomb into refused calls, ending on its own', async () => {
    const bomb = [
      'import os',
      'forked = refused = 0',
      'for _ in range(20000):',
      '    try:',
      '        if os.fork() == 0:',
      '            os._exit(0)',
      '        forked += 1',
      '    except OSError:',
      '        refused += 1',
      'print("forked", forked, "refused", refused)',
    ].join('\n');
    const result = completed(await run(bomb, 5));
    assert.equal(result.output, 'forked 0 refused 20000\n');
  });

  it('kills threads left running when the code returns', async () => {
    const marker = `pvai-${randomUUID().slice(0, 8)}`;
    const code = [
      'import ctypes, threading, time',
      'def linger():',
      `    ctypes.CDLL(None).prctl(15, b"${marker}")`,
      '    while True:',
      '        time.sleep(0.05)',
      'threading.Thread(target=linger).start()',
      'threading.Thread(target=linger, daemon=True).start()',
      'time.sleep(0.5)',
      'print("returning")',
    ].join('\n');
    const running = run(code, 3);
    // Prove the probe sees them while the code runs, so the empty result afterwards means something.
    let seenWhileRunning = 0;
    for (let attempt = 0; attempt < 40 && seenWhileRunning < 2; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      seenWhileRunning = hostTasksNamed(marker).length;
    }
    const outcome = await running;
    assert.equal(outcome.output, 'returning\n');
    assert.equal(seenWhileRunning, 2);
    // Killed threads leave within milliseconds, not all in the same instant as the pipes close.
    const left = await eventually(
      async () => hostTasksNamed(marker),
      (tasks) => tasks.length === 0,
      500,
    );
    assert.deepEqual(left, []);
  });
});
