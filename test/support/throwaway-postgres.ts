import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

const run = promisify(execFile);
/** The newest installed server's binaries (Debian's layout), or PG_BIN. */
const BIN =
  process.env.PG_BIN ??
  join(
    '/usr/lib/postgresql',
    (existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : ['15'])
      .sort((a, b) => Number(a) - Number(b))
      .at(-1) ?? '15',
    'bin',
  );

/**
 * A PostgreSQL server of the test's own, on a free port, to stop and start under a running pvai: the shared
 * cluster (DATABASE_URL) serves other suites at the same time and must never be stopped. PostgreSQL refuses to
 * run as root, so as root its commands run as the `postgres` user (runuser).
 */
export interface ThrowawayPostgres {
  /** `postgres://…/pvai` on this server: a database made empty for the test. */
  url: string;
  /** Stops the server (fast: sessions are ended, as a restart of the database does); waits until it is down. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data; waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops it and removes its files. */
  destroy(): Promise<void>;
}

/**
 * The skip of a suite that needs a throwaway PostgreSQL, with the reason node:test prints; false where it runs.
 * In CI (CI=true) PostgreSQL is installed, so a missing one fails instead of silently skipping.
 */
export function throwawayPostgresSkip(): string | false {
  if (existsSync(join(BIN, 'initdb'))) return false;
  if (process.env.CI === 'true') throw new Error(`CI=true but there is no PostgreSQL server at ${BIN} (set PG_BIN)`);
  return `PostgreSQL's server binaries are not installed at ${BIN} (set PG_BIN)`;
}

async function as(command: string, args: string[]): Promise<void> {
  const file = join(BIN, command);
  if (process.getuid?.() === 0) await run('runuser', ['-u', 'postgres', '--', file, ...args]);
  else await run(file, args);
}

export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const root = mkdtempSync(join(tmpdir(), 'pvai-throwaway-pg-'));
  chmodSync(root, 0o777);
  const data = join(root, 'data');
  const port = await freePort();
  await as('initdb', ['-D', data, '-U', 'pvai', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  const pgCtl = (...args: string[]) => as('pg_ctl', ['-D', data, '-w', '-t', '30', ...args]);
  const start = () =>
    pgCtl('-l', join(root, 'log'), '-o', `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start');
  await start();
  await as('createdb', ['-h', '127.0.0.1', '-p', String(port), '-U', 'pvai', 'pvai']);
  let stopped = false;
  return {
    url: `postgres://pvai@127.0.0.1:${port}/pvai`,
    async stop() {
      await pgCtl('-m', 'fast', 'stop');
      stopped = true;
    },
    async start() {
      await start();
      stopped = false;
    },
    async destroy() {
      if (!stopped) await pgCtl('-m', 'immediate', 'stop').catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
