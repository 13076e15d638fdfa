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
  maxProcesses: number;
  /** Longest traceback text the wrapper reports. */
  errorLimitChars: number;
}

/** The sandbox's private work dir: cwd, HOME, and the target of /tmp. */
export const WORK_DIR = '/work';

/**
 * The bwrap command line for one sandbox. The only host tree visible inside is /usr (read-only);
 * /etc, /home, /root, /var, the repo and the service's data never exist in the sandbox's mount namespace.
 */
export function buildBwrapArgs(spec: SandboxLaunchSpec): string[] {
  const limits = JSON.stringify({
    memoryBytes: spec.memoryBytes,
    fileSizeBytes: spec.fileSizeBytes,
    maxProcesses: spec.maxProcesses,
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
    // Filesystem: read-only system files, fresh /proc for the new pid namespace, minimal /dev.
    '--ro-bind',
    '/usr',
    '/usr',
    ...rootEntryArgs,
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--perms',
    '0700',
    '--size',
    String(spec.workDirBytes),
    '--tmpfs',
    WORK_DIR,
    // tempfile and friends expect /tmp; point it into the size-capped work dir.
    '--symlink',
    WORK_DIR.slice(1),
    '/tmp',
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
