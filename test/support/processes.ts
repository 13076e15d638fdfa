import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'src', 'cli', 'pvai.ts');
const run = promisify(execFile);

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
  return run(process.execPath, ['--import', 'tsx', CLI, ...args], {
    cwd: ROOT,
    env: { ...process.env, PVAI_LOG_LEVEL: 'silent', ...env },
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
  stop(): Promise<void>;
}

/** `pvai serve` in its own process; resolves once /z1/health answers. */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve'], {
    cwd: ROOT,
    env: { ...process.env, PVAI_LOG_LEVEL: 'warn', PVAI_HOST: '127.0.0.1', PVAI_PORT: String(port), ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
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
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
