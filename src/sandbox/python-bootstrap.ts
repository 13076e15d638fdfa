import { PYTHON_CONFINE } from './python-confine.js';

/**
 * The Python wrapper that runs as the sandbox's only process, pid 1 (`python3 -I -B -u -c BOOTSTRAP LIMITS_JSON`).
 *
 * Protocol, all inside the sandbox:
 *  - argv[1]: JSON of fixed limits (known when the sandbox is pre-started).
 *  - fd 3 (report channel): the wrapper writes `ready\n` once the rlimits, the work dir and the seccomp
 *    filter (python-confine.ts) are in place, then one JSON line
 *    `{"error": str|null, "executionTimeMs": float}` after the user's code ran.
 *  - stdin: one JSON document `{"code": str, "cpuSeconds": int}`; the host closes stdin after it,
 *    so a pooled sandbox simply blocks here until a request arrives.
 *  - fd 1: everything the code prints; fd 2 is made a dup of fd 1 so stdout and stderr interleave
 *    exactly as printed (`-u` makes both unbuffered, so nothing reorders in Python either).
 *
 * The wrapper exits with os._exit right after reporting: interpreter teardown is wasted time, and the
 * host kills the whole sandbox as soon as the report arrives anyway.
 */
export const PYTHON_BOOTSTRAP = String.raw`
import os, sys
${PYTHON_CONFINE}
def _pvai_main():
    import builtins, json, linecache, resource, time, traceback, types

    limits = json.loads(sys.argv[1])
    del sys.argv[1:]
    # Only there so glibc keeps few malloc arenas (64 MiB of address space each) under RLIMIT_AS.
    os.environ.pop('MALLOC_ARENA_MAX', None)

    def hard_limit(which, value):
        resource.setrlimit(which, (value, value))

    hard_limit(resource.RLIMIT_AS, limits['memoryBytes'])
    hard_limit(resource.RLIMIT_FSIZE, limits['fileSizeBytes'])
    hard_limit(resource.RLIMIT_NPROC, limits['maxProcesses'])
    hard_limit(resource.RLIMIT_NOFILE, limits['maxOpenFiles'])
    hard_limit(resource.RLIMIT_CORE, 0)
    _pvai_confine(limits)
    error_limit = limits['errorLimitChars']

    os.dup2(1, 2)
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(encoding='utf-8')

    def report(message):
        os.write(3, message.encode('utf-8') + b'\n')

    report('ready')
    request = json.loads(sys.stdin.buffer.read())

    # The code gets an empty stdin: input() raises EOFError instead of reading host data.
    devnull = os.open('/dev/null', os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)

    cpu = request['cpuSeconds']
    # Soft limit sends SIGXCPU (ignored by a pid 1 without a handler), the hard limit one second later is SIGKILL.
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    code = request['code']
    # Registering the source lets tracebacks show the offending lines, as 'python -c' cannot.
    linecache.cache['<string>'] = (len(code), None, code.splitlines(True), '<string>')
    module = types.ModuleType('__main__')
    module.__dict__['__builtins__'] = builtins
    sys.modules['__main__'] = module
    sys.argv[0] = '-c'
    # Headroom released before formatting a MemoryError, so the traceback itself can be allocated.
    reserve = [bytearray(1 << 20)]

    def describe(exc):
        if isinstance(exc, MemoryError):
            reserve.clear()
            traceback.clear_frames(exc.__traceback__)
            module.__dict__.clear()
        # Drop the wrapper's own frame; a SyntaxError from compile() is then shown without a stack,
        # like the interpreter does for a script.
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        text = ''.join(traceback.format_exception(type(exc), exc, tb))
        if len(text) > error_limit:
            text = text[:error_limit] + '\n[error truncated at %d characters]' % error_limit
        return text

    error = None
    started = time.perf_counter()
    try:
        exec(compile(code, '<string>', 'exec'), module.__dict__)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            error = describe(exc)
    except BaseException as exc:
        error = describe(exc)
    elapsed_ms = (time.perf_counter() - started) * 1000.0

    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass
    report(json.dumps({'error': error, 'executionTimeMs': elapsed_ms}))

try:
    _pvai_main()
except BaseException as exc:
    # Before 'ready' this goes to bwrap's stderr, which the host shows as the reason the sandbox is
    # unavailable; afterwards fd 2 is the output. One line either way.
    import traceback
    sys.stderr.write('pvai sandbox wrapper: ' + ''.join(traceback.format_exception_only(type(exc), exc)))
    sys.stderr.flush()
    os._exit(70)
os._exit(0)
`;
