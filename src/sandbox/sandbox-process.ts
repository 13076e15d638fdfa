import { type ChildProcess, spawn } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { buildBwrapArgs, type SandboxLaunchSpec } from './bwrap-args.js';
import { CappedOutput } from './output-buffer.js';
import type { ExecutionOutcome } from './types.js';

/**
 * Host uid/gid the sandbox runs as when the service runs as root. It matters: RLIMIT_NPROC is not
 * enforced for processes whose real uid is host root, and bwrap maps the inside uid onto the uid
 * that started it, so bwrap itself must be started as an unprivileged user.
 */
const UNPRIVILEGED_HOST_ID = 65534;
/** How long a fresh sandbox may take to reach `ready` before it counts as broken. */
const STARTUP_TIMEOUT_MS = 15_000;
/** How long to wait for the pipes to drain after SIGKILL before giving up on them. */
const KILL_GRACE_MS = 2_000;
/** Exit status of the wrapper when it failed itself (see python-bootstrap.ts). */
const WRAPPER_FAILURE_STATUS = 70;

export interface RunRequest {
  code: string;
  timeoutMs: number;
  cpuSeconds: number;
}

interface WrapperReport {
  error: string | null;
  executionTimeMs: number;
}

interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The sandbox never became ready: bwrap refused (no user namespaces, bad path, …) or Python failed to start. */
export class SandboxStartError extends Error {
  override readonly name = 'SandboxStartError';
}

/**
 * One bwrap sandbox running the Python wrapper, used for exactly one execution. Starting it and
 * running code are separate steps so a pool can start it ahead of time.
 */
export class SandboxProcess {
  /** Resolves once the interpreter is up and waiting for code; rejects with bwrap's own complaint. */
  readonly ready: Promise<void>;
  private readonly child: ChildProcess;
  private readonly output: CappedOutput;
  private readonly diagnostics = new CappedOutput(4096);
  private readonly closed: Promise<ExitStatus>;
  private readonly reportLimitBytes: number;
  private reportLine = '';
  private reportOverflow = false;
  private report: WrapperReport | null = null;
  private onReport: (() => void) | null = null;
  private exited = false;
  private used = false;

  constructor(spec: SandboxLaunchSpec, outputLimitBytes: number) {
    this.output = new CappedOutput(outputLimitBytes);
    // JSON may spell one character as up to 12 bytes (a \uXXXX surrogate pair); leave room for that.
    this.reportLimitBytes = spec.errorLimitChars * 12 + 4096;
    const runAsUnprivileged = process.getuid?.() === 0;
    this.child = spawn(spec.bwrapPath, buildBwrapArgs(spec), {
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
      env: {}, // bwrap itself gets nothing from the service's environment either
      cwd: '/',
      detached: true, // own process group, so one kill reaches every host-side bwrap process
      ...(runAsUnprivileged ? { uid: UNPRIVILEGED_HOST_ID, gid: UNPRIVILEGED_HOST_ID } : {}),
    });

    let markReady: () => void = () => {};
    let failStartup: (error: Error) => void = () => {};
    this.ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failStartup = reject;
    });
    // A pooled sandbox may fail before anyone awaits it; that must not be an unhandled rejection.
    this.ready.catch(() => {});
    const startupTimer = setTimeout(() => {
      failStartup(new SandboxStartError(`sandbox did not start within ${STARTUP_TIMEOUT_MS} ms`));
      this.kill();
    }, STARTUP_TIMEOUT_MS);
    startupTimer.unref();

    this.closed = new Promise<ExitStatus>((resolve) => {
      this.child.once('error', (error) => {
        this.exited = true;
        failStartup(new SandboxStartError(`cannot start bubblewrap: ${error.message}`));
        resolve({ code: null, signal: null });
      });
      this.child.once('exit', () => {
        this.exited = true;
      });
      this.child.once('close', (code, signal) => {
        this.exited = true;
        clearTimeout(startupTimer);
        const complaint = this.diagnostics.text().trim();
        failStartup(
          new SandboxStartError(
            complaint === '' ? `sandbox exited during startup (status ${code ?? signal})` : complaint,
          ),
        );
        resolve({ code, signal });
      });
    });

    this.child.stdin?.on('error', () => {}); // EPIPE when the sandbox died first; the exit path reports it
    this.child.stdout?.on('data', (chunk: Buffer) => this.output.append(chunk));
    this.child.stderr?.on('data', (chunk: Buffer) => this.diagnostics.append(chunk));
    const reportChannel = this.child.stdio[3];
    if (reportChannel instanceof Readable) {
      reportChannel.setEncoding('utf8');
      reportChannel.on('data', (text: string) =>
        this.readReport(text, () => {
          clearTimeout(startupTimer);
          markReady();
        }),
      );
    }
  }

  /** Whether this sandbox can still take a request (not used, not dead). */
  get usable(): boolean {
    return !this.used && !this.exited;
  }

  /** Runs the code once. Rejects with the startup error if the sandbox never became ready. */
  async run(request: RunRequest, signal?: AbortSignal): Promise<ExecutionOutcome> {
    if (this.used) throw new Error('a sandbox runs exactly one execution');
    this.used = true;
    try {
      signal?.throwIfAborted();
      await raceAbort(this.ready, signal);
    } catch (error) {
      this.kill();
      throw error;
    }

    this.child.stdin?.end(JSON.stringify({ code: request.code, cpuSeconds: request.cpuSeconds }));
    const started = performance.now();

    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    // Whatever comes first wins; later resolve() calls are no-ops.
    const ending = await new Promise<'report' | 'exit' | 'timeout' | 'abort'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), request.timeoutMs);
      onAbort = () => resolve('abort');
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted === true) resolve('abort');
      this.onReport = () => resolve('report');
      if (this.report !== null) resolve('report');
      void this.closed.then(() => resolve('exit'));
    });
    clearTimeout(timer);
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort);
    this.onReport = null;
    const hostElapsedMs = performance.now() - started;

    // Done either way: kill everything still running in the sandbox (forked children, threads, hangs),
    // then wait for the pipes to drain so the output printed so far is complete.
    this.kill();
    const status = await this.waitForClose();
    if (ending === 'abort') throw signal?.reason ?? new DOMException('The operation was aborted', 'AbortError');
    const output = this.output.text();
    if (ending === 'timeout') return { kind: 'timeout', output, executionTimeMs: roundMs(hostElapsedMs) };
    if (this.report !== null) {
      // The wrapper times only the code, which is more exact than the host's clock (that also counts reading
      // the request and the report's way out), but the code can write its own report to fd 3. So the
      // reported time is believed only inside what the host saw: never below 0, never above the host's.
      const reported = this.report.executionTimeMs;
      return {
        kind: 'completed',
        output,
        error: this.report.error,
        executionTimeMs: roundMs(Math.min(Math.max(reported, 0), hostElapsedMs)),
      };
    }
    return { kind: 'completed', output, error: describeAbnormalExit(status), executionTimeMs: roundMs(hostElapsedMs) };
  }

  /**
   * SIGKILL the sandbox: bwrap's process group on the host. The interpreter, pid 1 of the sandbox's pid
   * namespace, is in a session of its own (--new-session) but gets SIGKILL when bwrap dies (--die-with-parent),
   * and its death tears down the namespace with every thread in it.
   */
  kill(): void {
    const pid = this.child.pid;
    if (pid === undefined || this.exited) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  /** Kills the sandbox and resolves once it is gone. */
  async dispose(): Promise<void> {
    this.used = true;
    this.kill();
    await this.waitForClose();
  }

  /**
   * Waits (bounded) for the sandbox to exit and its pipes to drain, then drops our ends of the pipes,
   * so nothing the sandbox might have left behind can keep file descriptors of the service open.
   */
  private async waitForClose(): Promise<ExitStatus | null> {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), KILL_GRACE_MS);
    });
    try {
      return await Promise.race([this.closed, grace]);
    } finally {
      clearTimeout(timer);
      for (const stream of this.child.stdio) stream?.destroy();
    }
  }

  /** Parses the fd-3 channel: `ready`, then one JSON report. Bounded, since user code can write to fd 3 too. */
  private readReport(text: string, onReady: () => void): void {
    if (this.reportOverflow) return;
    this.reportLine += text;
    if (Buffer.byteLength(this.reportLine) > this.reportLimitBytes) {
      this.reportOverflow = true;
      this.reportLine = '';
      return;
    }
    let newline = this.reportLine.indexOf('\n');
    while (newline !== -1) {
      const line = this.reportLine.slice(0, newline);
      this.reportLine = this.reportLine.slice(newline + 1);
      if (line === 'ready') onReady();
      else if (this.report === null) {
        this.report = parseReport(line);
        if (this.report !== null) this.onReport?.();
      }
      newline = this.reportLine.indexOf('\n');
    }
  }
}

function parseReport(line: string): WrapperReport | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const error: unknown = Reflect.get(value, 'error');
  const executionTimeMs: unknown = Reflect.get(value, 'executionTimeMs');
  if ((typeof error !== 'string' && error !== null) || typeof executionTimeMs !== 'number') return null;
  return { error, executionTimeMs };
}

/** Text for `error` when the interpreter ended without reporting (killed by a limit, os._exit, …). */
function describeAbnormalExit(status: ExitStatus | null): string | null {
  if (status === null) return 'The sandbox ended without reporting a result';
  const code = status.code;
  if (code === 0) return null; // os._exit(0) from the code: a normal, if abrupt, end
  if (code === WRAPPER_FAILURE_STATUS) return 'The sandbox wrapper failed (details in the output)';
  // bwrap reports a child killed by signal N as exit status 128 + N.
  if (code !== null && code > 128) {
    const signalName = signalNameOf(code - 128);
    const reason =
      signalName === 'SIGXCPU' || signalName === 'SIGKILL'
        ? ' (CPU time limit exceeded or killed)'
        : signalName === 'SIGXFSZ'
          ? ' (file size limit exceeded)'
          : signalName === 'SIGSEGV'
            ? ' (a crash in native code, e.g. the C stack overflowed by deep recursion after sys.setrecursionlimit; where is in the output)'
            : '';
    return `Process killed by signal ${signalName}${reason}`;
  }
  return `Process exited with status ${code ?? status.signal ?? 'unknown'}`;
}

function signalNameOf(signalNumber: number): string {
  for (const [name, number] of Object.entries(osConstants.signals)) {
    if (number === signalNumber) return name;
  }
  return `signal ${signalNumber}`;
}

async function raceAbort<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function roundMs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
