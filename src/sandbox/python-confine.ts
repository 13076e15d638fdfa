/**
 * Python source of `_pvai_confine(limits)`, which the wrapper (python-bootstrap.ts) calls once its own imports
 * are done and before it reads any code. It is part of the `-c` script, so it runs as the sandbox's pid 1.
 *
 * 1. The work dir: a fresh mount namespace and a tmpfs on /work with `size` AND `nr_inodes`. bwrap's own
 *    --tmpfs sets only the size, and inodes are kernel memory that `size` does not count: 439,000 empty
 *    directories in 3 s took ~800 MB of slab in a 16 MiB tmpfs.
 * 2. Capabilities: bwrap grants CAP_SYS_ADMIN in the sandbox's own user namespace for step 1 only; it is
 *    dropped here, and the wrapper refuses to go on if /proc/self/status still shows any capability.
 * 3. A seccomp filter (libseccomp through Debian's python3-seccomp), which the code cannot remove: filters
 *    only ever stack, the most restrictive answer wins, and libseccomp sets no_new_privs. Default: allow.
 *    Refused with EPERM, so Python raises PermissionError:
 *    - new processes and programs: fork, vfork, execve, execveat, and clone without CLONE_THREAD (threads are
 *      clone with CLONE_THREAD and keep working). clone3 answers ENOSYS: its flags are in memory, which seccomp
 *      cannot read, and glibc then falls back to clone, whose flags it can;
 *    - reaching into a process: ptrace, process_vm_readv, process_vm_writev;
 *    - memory outside RLIMIT_AS: memfd_create, System V shm/msg/sem, enlarging socket buffers
 *      (SO_SNDBUF, SO_RCVBUF and their FORCE forms) and pipes (F_SETPIPE_SZ). Measured before: 64 open
 *      Unix socket pairs pinned 470 MB, 128 fds of loopback TCP 640 MB;
 *    - sockets other than AF_UNIX (there is no network anyway, and loopback TCP buffers are large);
 *    - io_uring (its requests, e.g. IORING_OP_SOCKET, bypass the syscall filter), userfaultfd, bpf,
 *      perf_event_open and the key-management calls: kernel attack surface no Python code here needs.
 *    Syscalls of another ABI (i386 `int 0x80`, x32) answer EPERM too, so they cannot sidestep the numbers above.
 */
export const PYTHON_CONFINE = String.raw`
def _pvai_confine(limits):
    import ctypes, errno
    try:
        import seccomp
    except ImportError:
        raise RuntimeError('the seccomp module is missing: install python3-seccomp (libseccomp for this '
                           'interpreter); the sandbox never runs code without its filter') from None

    libc = ctypes.CDLL(None, use_errno=True)

    def check(result, what):
        if result != 0:
            code = ctypes.get_errno()
            raise OSError(code, '%s: %s' % (what, os.strerror(code)))

    CLONE_NEWNS, MS_NOSUID, MS_NODEV = 0x00020000, 2, 4
    check(libc.unshare(CLONE_NEWNS), 'unshare(CLONE_NEWNS)')
    options = 'size=%d,nr_inodes=%d,mode=0700' % (limits['workDirBytes'], limits['workDirMaxFiles'])
    check(libc.mount(b'tmpfs', b'/work', b'tmpfs', MS_NOSUID | MS_NODEV, options.encode()), 'mount /work')
    os.chdir('/work')  # the old cwd is the directory underneath the new mount

    class CapHeader(ctypes.Structure):
        _fields_ = [('version', ctypes.c_uint32), ('pid', ctypes.c_int)]

    class CapData(ctypes.Structure):
        _fields_ = [('effective', ctypes.c_uint32), ('permitted', ctypes.c_uint32),
                    ('inheritable', ctypes.c_uint32)]

    LINUX_CAPABILITY_VERSION_3, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 0x20080522, 47, 4
    check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), 'clear ambient capabilities')
    check(libc.capset(ctypes.byref(CapHeader(LINUX_CAPABILITY_VERSION_3, 0)), (CapData * 2)()), 'capset')
    with open('/proc/self/status') as status:
        for line in status:
            name, _, value = line.partition(':')
            if name in ('CapInh', 'CapPrm', 'CapEff', 'CapAmb') and int(value, 16) != 0:
                raise RuntimeError('capabilities still held after dropping them: ' + line.strip())

    deny = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    rules.set_attr(seccomp.Attr.ACT_BADARCH, deny)
    rules.set_attr(seccomp.Attr.CTL_TSYNC, 1)
    for name in ('fork', 'vfork', 'execve', 'execveat',
                 'ptrace', 'process_vm_readv', 'process_vm_writev',
                 'memfd_create', 'shmget', 'msgget', 'semget',
                 'io_uring_setup', 'io_uring_enter', 'io_uring_register',
                 'userfaultfd', 'bpf', 'perf_event_open', 'keyctl', 'add_key', 'request_key'):
        rules.add_rule(deny, name)
    rules.add_rule(seccomp.ERRNO(errno.ENOSYS), 'clone3')
    CLONE_THREAD = 0x00010000
    rules.add_rule(deny, 'clone', seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_THREAD, 0))
    AF_UNIX = 1
    rules.add_rule(deny, 'socket', seccomp.Arg(0, seccomp.NE, AF_UNIX))
    rules.add_rule(deny, 'socketpair', seccomp.Arg(0, seccomp.NE, AF_UNIX))
    SOL_SOCKET, SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE = 1, 7, 8, 32, 33
    for option in (SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE):
        rules.add_rule(deny, 'setsockopt', seccomp.Arg(1, seccomp.EQ, SOL_SOCKET), seccomp.Arg(2, seccomp.EQ, option))
    F_SETPIPE_SZ = 1031
    rules.add_rule(deny, 'fcntl', seccomp.Arg(1, seccomp.EQ, F_SETPIPE_SZ))
    rules.load()

    # os.system would only return 127 << 8 (its shell cannot start); say why instead. Compiled under a name
    # of its own: the user's code is '<string>' too, and its traceback would show the user's line 2 here.
    refusal = {'EPERM': errno.EPERM}
    exec(compile('def system(command):\n'
                 '    raise PermissionError(EPERM, "subprocesses are not allowed in this sandbox", command)\n',
                 '<sandbox>', 'exec'), refusal)
    os.system = refusal['system']
`;
