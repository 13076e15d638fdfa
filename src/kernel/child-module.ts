import { type ChildProcess, fork } from 'node:child_process';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A process of the service's own running one of its modules (a local model's engine, the background embedder), and
 * that module's side of it. Messages cross by structured cloning; the child's output is the server's.
 */

/** `name`'s module beside the module at `from` (an import.meta.url): `.ts` under tests (tsx), `.js` once built. */
export function siblingModule(from: string, name: string): string {
  return fileURLToPath(new URL(`./${name}${extname(fileURLToPath(from))}`, from));
}

/** Starts `modulePath` in a child process with `env` added, and the server's flags that load code. */
export function forkModule(modulePath: string, env: Record<string, string>): ChildProcess {
  return fork(modulePath, [], {
    execArgv: inheritedLoaders(process.execArgv),
    env: { ...process.env, ...env },
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/**
 * In the child: hands the server's messages to the handler `serve` makes, given how to answer, and lives as long as
 * the server does. It ignores SIGINT and SIGTERM, so that a server draining on either (a terminal's Ctrl-C reaches
 * the whole process group) still gets its work done, and exits when the server closes the channel to it, or dies,
 * which closes it too.
 */
export function serveParent<In, Out>(serve: (send: (message: Out) => void) => (message: In) => void): void {
  const receive = serve((message) => {
    if (process.connected) process.send?.(message);
  });
  process.on('message', (message) => receive(message as In));
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => undefined);
  process.on('disconnect', () => process.exit(0));
}

/**
 * The server's flags that load code (`--import tsx` under tests, a preload), passed on so the child's module loads
 * as the server's did; never an inspector, profiler or test runner's flag, which would clash or double up.
 */
function inheritedLoaders(execArgv: readonly string[]): string[] {
  const loaders = ['--import', '--require', '-r', '--loader', '--experimental-loader', '--conditions', '-C'];
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i] as string;
    if (!loaders.includes(flag.split('=')[0] as string)) continue;
    kept.push(flag);
    if (!flag.includes('=') && i + 1 < execArgv.length) kept.push(execArgv[++i] as string);
  }
  return kept;
}
