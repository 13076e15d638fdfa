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
    import builtins, faulthandler, json, linecache, resource, time, traceback, types

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
    # A crash in native code (a C stack overflowed by deep recursion after sys.setrecursionlimit, ctypes)
    # cannot be reported by this wrapper; this prints where the code was into the output instead.
    faulthandler.enable()

    # Everything used after the code ran is bound now: the code shares this interpreter and may replace
    # module attributes (time.perf_counter, json.dumps, ...).
    perf_counter, dumps, write = time.perf_counter, json.dumps, os.write
    format_exception, format_exception_only = traceback.format_exception, traceback.format_exception_only
    TracebackException, extract_frames = traceback.TracebackException, traceback.StackSummary.extract
    walk_tb, set_recursion_limit = traceback.walk_tb, sys.setrecursionlimit
    recursion_limit = sys.getrecursionlimit()

    def report(message):
        write(3, message.encode('utf-8') + b'\n')

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
    # Frames shown from each end of a deeper traceback. Extracting all 100,000 frames of a recursion
    # (allowed after sys.setrecursionlimit) took 3.8 s, long enough to turn a RecursionError into a timeout.
    frames_kept = 50

    def format_error(exc, tb):
        depth = sum(1 for _ in walk_tb(tb))
        if depth <= 2 * frames_kept:
            return ''.join(format_exception(type(exc), exc, tb))
        # The last frames (where it failed) of every exception in the chain, then the first frames of the
        # raised one (where the recursion started) put back in front of them.
        lines = list(TracebackException(type(exc), exc, tb, limit=-frames_kept).format())
        header = 'Traceback (most recent call last):\n'
        if header in lines:
            at = len(lines) - lines[::-1].index(header)
            omitted = '  [%d frames omitted]\n' % (depth - 2 * frames_kept)
            lines[at:at] = extract_frames(walk_tb(tb), limit=frames_kept).format() + [omitted]
        return ''.join(lines)

    def describe(exc):
        # The code is done; give the formatting below a normal stack even if the code lowered the limit.
        set_recursion_limit(recursion_limit)
        if isinstance(exc, MemoryError):
            reserve.clear()
            traceback.clear_frames(exc.__traceback__)
            module.__dict__.clear()
        # Drop the wrapper's own frame; a SyntaxError from compile() is then shown without a stack,
        # like the interpreter does for a script.
        tb = exc.__traceback__.tb_next if exc.__traceback__ is not None else None
        try:
            text = format_error(exc, tb)
        except BaseException:
            # The exception itself may defeat formatting (a __str__ that raises SystemExit, no memory left).
            try:
                text = ''.join(format_exception_only(type(exc), exc))
            except BaseException:
                text = '%s (its message could not be formatted)\n' % type(exc).__name__
        if len(text) > error_limit:
            text = text[:error_limit] + '\n[error truncated at %d characters]' % error_limit
        return text

    error = None
    started = perf_counter()
    try:
        exec(compile(code, '<string>', 'exec'), module.__dict__)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            error = describe(exc)
    except BaseException as exc:
        error = describe(exc)
    elapsed_ms = (perf_counter() - started) * 1000.0

    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass
    report(dumps({'error': error, 'executionTimeMs': elapsed_ms}))

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
