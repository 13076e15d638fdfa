import { type Command, CommanderError } from 'commander';
import { ConfigError } from '../config/index.js';
import { AppError, errorBody } from '../errors/index.js';

/** The exit status of a command line commander cannot parse (an unknown option, a missing argument). */
const USAGE_EXIT = 2;

/** Whether the user asked for stacks: `--debug` anywhere on the command line, or PVAI_DEBUG set (not 0). */
function debugRequested(argv: readonly string[] = process.argv, env = process.env): boolean {
  return argv.includes('--debug') || (env.PVAI_DEBUG !== undefined && !['', '0', 'false'].includes(env.PVAI_DEBUG));
}

/** `pvai keys list`: the words of the command line that name commands, for the usage hint of a parse error. */
function commandPath(program: Command, args: readonly string[]): string {
  const names = [program.name()];
  let command = program;
  for (const arg of args) {
    const sub = command.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!sub) break;
    names.push(sub.name());
    command = sub;
  }
  return names.join(' ');
}

/**
 * Makes commander's refusals one line on stderr with the fix (`pvai keys list --help` for the usage) instead of
 * the whole help, and lets them reach `failureLine` as a CommanderError rather than exit inside commander. Call
 * before adding commands: commander copies these settings into each command `.command()` creates.
 */
export function oneLineUsageErrors(program: Command): Command {
  return program.exitOverride().configureOutput({
    outputError: (message, write) => {
      const what = message.replace(/^error: /, '').trim();
      write(`pvai: ${what} (see \`${commandPath(program, process.argv.slice(2))} --help\`)\n`);
    },
  });
}

/** Node's system errors the CLI meets (a file, a directory, a database), as a sentence with what to do. */
function systemErrorLine(err: NodeJS.ErrnoException & { address?: string; port?: number }): string | undefined {
  const where = err.path ?? (err.address ? `${err.address}:${err.port ?? ''}` : '');
  switch (err.code) {
    case 'ENOENT':
      return `${where}: no such file or directory (check the path)`;
    case 'EISDIR':
      return `${where}: is a directory (give a file)`;
    case 'EACCES':
    case 'EPERM':
      return `${where}: permission denied (check the file's permissions, or PVAI_DATA_DIR)`;
    case 'EEXIST':
      return `${where}: exists and is not a directory (check the path, or PVAI_DATA_DIR)`;
    case 'ENOTDIR':
      return `${where}: a part of this path is not a directory (check the path, or PVAI_DATA_DIR)`;
    case 'ECONNREFUSED':
      return `cannot reach ${where || 'the database'}: nothing listens there (start the database, or fix DATABASE_URL)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot resolve the host ${(err as { hostname?: string }).hostname ?? where} (check DATABASE_URL or the URL given)`;
    default:
      return undefined;
  }
}

/** PostgreSQL's refusals of a connection (SQLSTATE), as the fix to DATABASE_URL. */
function postgresErrorLine(err: { code?: unknown; message: string }): string | undefined {
  switch (err.code) {
    case '3D000':
      return `${err.message} (create it, e.g. \`createdb\`, or fix the database name in DATABASE_URL)`;
    case '28P01':
    case '28000':
      return `${err.message} (fix the user or password in DATABASE_URL)`;
    default:
      return undefined;
  }
}

/**
 * What `pvai` prints when a command fails, as one line: an AppError as the admin API words it (its JSON error
 * body with --json), a bad setting or a system error with what to do, anything else its message and how to get
 * the stack. With --debug or PVAI_DEBUG=1 an unexpected error is printed whole instead.
 */
export function failureLine(err: unknown, argv: readonly string[] = process.argv, env = process.env): string {
  if (err instanceof AppError) {
    return argv.includes('--json') ? JSON.stringify(errorBody(err)) : `pvai: ${err.code}: ${err.message}`;
  }
  if (err instanceof ConfigError) return `pvai: ${err.message}`;
  if (err instanceof Error) {
    const known = systemErrorLine(err) ?? postgresErrorLine(err);
    if (known) return `pvai: ${known}`;
  }
  if (debugRequested(argv, env)) return err instanceof Error ? (err.stack ?? err.message) : String(err);
  const message = (err instanceof Error ? err.message : String(err)).split('\n')[0]?.trim() || 'unexpected error';
  return `pvai: ${message} (run with PVAI_DEBUG=1 or --debug for the stack)`;
}

/** The exit status for an error: commander's own (0 after --help or --version, USAGE_EXIT for bad usage), else 1. */
export function failureExit(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : USAGE_EXIT;
  return 1;
}
