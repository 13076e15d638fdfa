import { spawnSync } from 'node:child_process';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * Suites that run real sandboxes need bubblewrap, Debian's python3 and its seccomp module. On a developer's
 * machine without them they are skipped with the install command; in CI (CI=true) they must run, so they are
 * never skipped.
 */
export function sandboxHostSkip(): string | false {
  if (process.env.CI === 'true') return false;
  const seccomp = () => spawnSync('/usr/bin/python3', ['-c', 'import seccomp'], { stdio: 'ignore' }).status === 0;
  if (onPath('bwrap') && onPath('python3') && seccomp()) return false;
  return 'bubblewrap, python3 or python3-seccomp is not installed here: run scripts/setup as root (or apt-get install bubblewrap python3 python3-seccomp)';
}

/** Host processes whose command line contains `marker` (to prove a sandbox left nothing behind). */
export function hostProcessesMentioning(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return found;
}

/**
 * Live host task ids (processes and threads) named `name`. Sandboxed code cannot exec a marker into a command
 * line, but any thread can name itself: `ctypes.CDLL(None).prctl(15, b"name")` (PR_SET_NAME, at most 15
 * bytes). Zombies are left out: a killed sandbox's pid 1 stays one, holding nothing, until the host reaps it.
 */
export function hostTasksNamed(name: string): number[] {
  const found: number[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // exited while we looked
    }
    for (const tid of tasks) {
      try {
        const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
        const field = (key: string): string | undefined => new RegExp(`^${key}:\\t(.*)$`, 'm').exec(status)?.[1];
        if (field('Name') === name && !/^[ZX]/.test(field('State') ?? 'X')) found.push(Number(tid));
      } catch {
        // exited while we looked
      }
    }
  }
  return found;
}
