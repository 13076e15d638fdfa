/** Public types of the Python sandbox; `index.ts` re-exports them. */

export interface SandboxConfig {
  /** bubblewrap executable: a path, or a bare name looked up on PATH. */
  bwrapPath: string;
  /** Interpreter run inside the sandbox. Must live under /usr, the only host tree the sandbox sees. */
  pythonPath: string;
  /** Pre-started sandboxes kept warm; 0 disables the pool (cold start per call). */
  poolSize: number;
  /** Executions running at once, server-wide. */
  maxConcurrent: number;
  /** Executions allowed to wait, server-wide, when no slot is free; beyond that SERVER_BUSY. */
  maxQueue: number;
  /**
   * Executions one account may run at once. Default: half of `maxConcurrent` (at least 1), so one account
   * can never hold every slot and another account's call starts at once.
   */
  maxConcurrentPerAccount: number;
  /** Executions one account may have waiting; beyond that ACCOUNT_BUSY. Default: a quarter of `maxQueue`. */
  maxQueuePerAccount: number;
  /** Cap on the combined stdout+stderr returned; the rest is dropped and a marker appended. */
  outputLimitBytes: number;
  /** RLIMIT_AS of the interpreter, the one process of an execution: its threads share it. */
  memoryLimitMb: number;
  /** Size of the private tmpfs mounted as the work dir (cwd, HOME, /tmp). */
  workDirSizeMb: number;
  /** Files and directories the work dir holds (tmpfs nr_inodes): inodes cost kernel memory that `size` does not count. */
  workDirMaxFiles: number;
  /** RLIMIT_FSIZE: the largest file the code may write. */
  maxFileSizeMb: number;
  /** RLIMIT_NPROC inside the sandbox's own user namespace. No process can be forked, so this caps threads. */
  maxProcesses: number;
  /** RLIMIT_NOFILE: also bounds the kernel buffers (pipes, Unix sockets) the code can fill. */
  maxOpenFiles: number;
}

export const DEFAULT_SANDBOX_CONFIG: SandboxConfig = Object.freeze({
  bwrapPath: 'bwrap',
  pythonPath: '/usr/bin/python3',
  poolSize: 2,
  maxConcurrent: 4,
  maxQueue: 32,
  maxConcurrentPerAccount: 2, // derived from maxConcurrent when not set (config.ts)
  maxQueuePerAccount: 8, // derived from maxQueue when not set (config.ts)
  outputLimitBytes: 65536,
  memoryLimitMb: 256,
  workDirSizeMb: 16,
  workDirMaxFiles: 4096,
  maxFileSizeMb: 8,
  maxProcesses: 16,
  maxOpenFiles: 64,
});

export interface ExecutionRequest {
  code: string;
  timeoutSeconds: number;
  /** Whose execution this is: capacity is shared fairly between accounts (docs/sandbox.md). */
  accountId: string;
}

export type ExecutionOutcome =
  | { kind: 'completed'; output: string; error: string | null; executionTimeMs: number }
  | { kind: 'timeout'; output: string; executionTimeMs: number };

export interface SandboxHealth {
  ok: boolean;
  detail: string;
}

/** The queue at this instant, for the metrics. */
export interface SandboxQueueState {
  active: number;
  queued: number;
}

export interface CodeRunner {
  execute(request: ExecutionRequest, signal?: AbortSignal): Promise<ExecutionOutcome>;
  health(): Promise<SandboxHealth>;
  /** Executions running and waiting now. */
  queueState(): SandboxQueueState;
  /** Kills pooled sandboxes; no leftover processes. */
  close(): Promise<void>;
}
