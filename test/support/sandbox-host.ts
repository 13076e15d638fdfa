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
 * Suites that run real sandboxes need bubblewrap and Debian's python3. On a developer's machine without
 * them they are skipped with the install command; in CI (CI=true) they must run, so they are never skipped.
 */
export function sandboxHostSkip(): string | false {
  if (process.env.CI === 'true') return false;
  if (onPath('bwrap') && onPath('python3')) return false;
  return 'bubblewrap or python3 is not installed here: run scripts/setup as root (or apt-get install bubblewrap python3)';
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
