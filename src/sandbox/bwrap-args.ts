import { PYTHON_BOOTSTRAP } from './python-bootstrap.js';

/** How a top-level host directory such as /lib is reproduced inside the sandbox. */
export type RootEntry =
  | { path: string; kind: 'symlink'; target: string } // merged-/usr systems: /lib -> usr/lib
  | { path: string; kind: 'directory' }; // older layouts: a real directory, bound read-only

/** Everything the sandbox command line depends on. */
export interface SandboxLaunchSpec {
  bwrapPath: string;
  pythonPath: string;
  /** /bin, /lib, /lib64, /sbin as they exist on this host (absent ones are left out). */
  rootEntries: readonly RootEntry[];
  memoryBytes: number;
  fileSizeBytes: number;
  workDirBytes: number;
  workDirMaxFiles: number;
  maxProcesses: number;
  maxOpenFiles: number;
  /** Longest traceback text the wrapper reports. */
  errorLimitChars: number;
}

/** The sandbox's private work dir: cwd, HOME, and the target of /tmp. */
const WORK_DIR = '/work';

/**
 * The bwrap command line for one sandbox. The only host tree visible inside is /usr (read-only);
 * /etc, /home, /root, /var, the repo and the service's data never exist in the sandbox's mount namespace.
 * The only writable file system is the work dir, which the wrapper mounts itself (python-confine.ts).
 */
export function buildBwrapArgs(spec: SandboxLaunchSpec): string[] {
  const limits = JSON.stringify({
    memoryBytes: spec.memoryBytes,
    fileSizeBytes: spec.fileSizeBytes,
    workDirBytes: spec.workDirBytes,
    workDirMaxFiles: spec.workDirMaxFiles,
    maxProcesses: spec.maxProcesses,
    maxOpenFiles: spec.maxOpenFiles,
    errorLimitChars: spec.errorLimitChars,
  });

  const rootEntryArgs = spec.rootEntries.flatMap((entry) =>
    entry.kind === 'symlink' ? ['--symlink', entry.target, entry.path] : ['--ro-bind', entry.path, entry.path],
  );

  return [
    // Namespaces: own users (uid/gid 65534 "nobody" inside), pids, network (loopback only), ipc, hostname.
    '--unshare-user',
    '--uid',
    '65534',
    '--gid',
    '65534',
    // Nested user namespaces would hand the code a fresh set of (namespaced) capabilities; refuse them.
    '--disable-userns',
    '--unshare-pid',
    // The interpreter is pid 1 itself: no bwrap reaper shares the namespace. The reaper runs unconfined by the
    // wrapper's seccomp filter and rlimits, and the code could ptrace it or write its /proc/1/mem (both
    // worked) to fork and exec through it.
    '--as-pid-1',
    '--unshare-net',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--hostname',
    'sandbox',
    // If the service dies, so does the sandbox; a new session stops TIOCSTI-style terminal injection.
    '--die-with-parent',
    '--new-session',
    '--cap-drop',
    'ALL',
    // Only to mount the work dir with an inode cap, which bwrap's --tmpfs cannot set. The wrapper drops it
    // (and checks that it is gone) before it reads any code.
    '--cap-add',
    'CAP_SYS_ADMIN',
    // Filesystem: read-only system files, fresh /proc for the new pid namespace, minimal /dev.
    '--ro-bind',
    '/usr',
    '/usr',
    ...rootEntryArgs,
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // bwrap's /dev and / are tmpfs with no size limit, and /dev/shm was writable: files there were memory
    // outside every cap. Both are read-only; the work dir is the one place to write.
    '--remount-ro',
    '/dev',
    // The mount point; the wrapper mounts the size- and inode-capped tmpfs on it.
    '--dir',
    WORK_DIR,
    // tempfile and friends expect /tmp; point it into the work dir.
    '--symlink',
    WORK_DIR.slice(1),
    '/tmp',
    '--remount-ro',
    '/',
    '--chdir',
    WORK_DIR,
    // Environment: nothing from the service survives.
    '--clearenv',
    '--setenv',
    'PATH',
    '/usr/local/bin:/usr/bin:/bin',
    '--setenv',
    'LANG',
    'C.UTF-8',
    '--setenv',
    'HOME',
    WORK_DIR,
    '--setenv',
    'PYTHONIOENCODING',
    'utf-8',
    // Removed again by the wrapper before user code runs; see python-bootstrap.ts.
    '--setenv',
    'MALLOC_ARENA_MAX',
    '2',
    '--',
    spec.pythonPath,
    '-I', // isolated: ignore PYTHON* variables and the user site
    '-B', // /usr is read-only anyway; do not even try to write .pyc files
    '-u', // unbuffered, so output order is preserved and output printed before a hang is not lost
    '-c',
    PYTHON_BOOTSTRAP,
    limits,
  ];
}
