import { constants } from 'node:fs';
import { access, lstat, readlink, realpath, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join } from 'node:path';
import { AppError } from '../errors/index.js';
import type { RootEntry } from './bwrap-args.js';
import type { SandboxConfig } from './types.js';

const INSTALL_HINT =
  'run scripts/setup as root, or install it with: sudo apt-get install bubblewrap python3 python3-seccomp';

/** What the host offers the sandbox, checked once before the first sandbox is started. */
export interface HostSetup {
  bwrapPath: string;
  pythonPath: string;
  rootEntries: RootEntry[];
}

export function sandboxUnavailable(reason: string): AppError {
  return new AppError('SANDBOX_UNAVAILABLE', `Python sandbox unavailable: ${reason}; ${INSTALL_HINT}`);
}

/** Verifies bwrap and the interpreter exist here; throws SANDBOX_UNAVAILABLE (never falls back). */
export async function inspectHost(config: SandboxConfig): Promise<HostSetup> {
  if (process.platform !== 'linux') {
    throw sandboxUnavailable(`bubblewrap needs Linux, this is ${process.platform}`);
  }
  const bwrapPath = await findExecutable(config.bwrapPath);
  if (bwrapPath === null) throw sandboxUnavailable(`bubblewrap not found at '${config.bwrapPath}'`);

  if (!isAbsolute(config.pythonPath)) {
    throw sandboxUnavailable(`pythonPath must be absolute, got '${config.pythonPath}'`);
  }
  if (!(await isExecutable(config.pythonPath))) {
    throw sandboxUnavailable(`Python interpreter not found at '${config.pythonPath}'`);
  }
  // Only /usr is mounted in the sandbox, so an interpreter elsewhere (pyenv under /root, say) cannot run there.
  const pythonReal = await realpath(config.pythonPath);
  if (!pythonReal.startsWith('/usr/')) {
    throw sandboxUnavailable(
      `Python interpreter must live under /usr (the only host tree mounted), got '${pythonReal}'`,
    );
  }

  const rootEntries: RootEntry[] = [];
  for (const path of ['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32']) {
    const entry = await describeRootEntry(path);
    if (entry !== null) rootEntries.push(entry);
  }
  return { bwrapPath, pythonPath: config.pythonPath, rootEntries };
}

async function describeRootEntry(path: string): Promise<RootEntry | null> {
  try {
    const stats = await lstat(path);
    if (stats.isSymbolicLink()) {
      const target = await readlink(path);
      // Reproduce only links into /usr; anything else could reach outside what is mounted.
      const resolved = isAbsolute(target) ? target : join('/', target);
      return resolved.startsWith('/usr/') ? { path, kind: 'symlink', target } : null;
    }
    return stats.isDirectory() ? { path, kind: 'directory' } : null;
  } catch {
    return null;
  }
}

async function findExecutable(name: string): Promise<string | null> {
  if (name.includes('/')) return (await isExecutable(name)) ? name : null;
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return null;
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
