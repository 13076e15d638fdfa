import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'src', 'cli', 'pvai.ts');
const BUILT_CLI = join(ROOT, 'dist', 'src', 'cli', 'pvai.js');
/**
 * Written by every build that changed anything (`tsc -b`, incremental): a build re-emits only the files whose
 * output changed, so the CLI's own file may be older than a source edited since and built.
 */
const BUILD_INFO = join(ROOT, 'dist', 'tsconfig.build.tsbuildinfo');
const run = promisify(execFile);

/** The newest modification time of the files under `dir`. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

let cliArgs: string[] | undefined;

/**
 * How a test starts `pvai`: the build `npm start` runs (`dist/`, which `npm test` makes first) when it is newer than
 * every source file (the CLI's file, or the build's record of what it compiled), else the sources through tsx, so a test file run alone after an edit never runs stale code.
 * The build starts in half the time tsx takes (no resolving and transforming of every import), and the suite
 * starts a process a hundred times and more.
 */
export function cliCommand(): string[] {
  if (!cliArgs) {
    let built = 0;
    try {
      built = Math.max(statSync(BUILT_CLI).mtimeMs, statSync(BUILD_INFO).mtimeMs);
    } catch {
      // not built
    }
    cliArgs = built > newest(join(ROOT, 'src')) ? [BUILT_CLI] : ['--import', 'tsx', CLI];
  }
  return cliArgs;
}

/**
 * The environment of a `pvai` process a test starts: with Node's compile cache, shared by all of them, so each
 * after the first skips compiling the modules it loads.
 */
export function cliEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  return { NODE_COMPILE_CACHE: join(tmpdir(), 'pvai-test-compile-cache'), ...process.env, ...env };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  server.close();
  await once(server, 'close');
  return port;
}

/** Runs the `pvai` CLI as a user would, on the given storage environment. */
export async function pvai(args: string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return run(process.execPath, [...cliCommand(), ...args], {
    cwd: ROOT,
    env: cliEnv({ PVAI_LOG_LEVEL: 'silent', ...env }),
  });
}

/** The same, for commands whose exit status is part of the answer (`doctor` exits 1 when a piece is missing). */
export async function pvaiStatus(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    return { code: 0, ...(await pvai(args, env)) };
  } catch (err) {
    const failed = err as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw err;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  /** What the process wrote to stdout so far (empty unless started with `{ stdout: true }`). */
  stdout(): string;
  stop(): Promise<void>;
}

/** `pvai serve` in its own process; resolves once /z1/health answers. `stdout: true` keeps what it prints. */
export async function startServerProcess(
  env: Record<string, string>,
  options: { stdout?: boolean } = {},
): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...cliCommand(), 'serve'], {
    cwd: ROOT,
    env: cliEnv({ PVAI_LOG_LEVEL: 'warn', PVAI_HOST: '127.0.0.1', PVAI_PORT: String(port), ...env }),
    stdio: ['ignore', options.stdout ? 'pipe' : 'ignore', 'inherit'],
  });
  let printed = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    printed += chunk;
  });
  const url = `http://127.0.0.1:${port}`;
  // Generous: two servers loading their models at once on a busy 2-core machine took over 30 s.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pvai serve exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/z1/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      // Not left running: a live child would keep the test process (and the whole file) from ending.
      child.kill('SIGKILL');
      throw new Error('pvai serve did not become healthy in 60 s');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    stdout: () => printed,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
