import { spawn } from 'node:child_process';

export interface CommandResult {
  stdout: string;
  stderr: string;
}

/** Thrown when a command is missing or exits non-zero; the message ends with the tail of its stderr. */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
    this.name = 'CommandError';
  }
}

/**
 * Runs a command and collects its output. `showProgress` sends both of its streams to our stderr
 * instead (pip's own progress bar), for steps a user waits on; stdout stays clean for `--json`.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  options: { showProgress?: boolean; env?: NodeJS.ProcessEnv } = {},
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: options.showProgress ? ['ignore', 2, 2] : ['ignore', 'pipe', 'pipe'],
      env: options.env ?? process.env,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
    child.once('error', (error) => reject(new CommandError(`${command}: ${error.message}`, '')));
    child.once('close', (code, signal) => {
      const stdout = Buffer.concat(out).toString('utf8');
      const stderr = Buffer.concat(err).toString('utf8');
      if (code === 0) return resolve({ stdout, stderr });
      const tail = stderr.trim().split('\n').slice(-6).join('\n');
      const how = signal ? `was stopped by ${signal}` : `exited with ${code}`;
      reject(new CommandError(`${[command, ...args].join(' ')} ${how}${tail ? `:\n${tail}` : ''}`, stderr));
    });
  });
}
