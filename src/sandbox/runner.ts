import { AppError } from '../errors/index.js';
import { type HostSetup, inspectHost, sandboxUnavailable } from './availability.js';
import type { SandboxLaunchSpec } from './bwrap-args.js';
import { resolveSandboxConfig } from './config.js';
import { WarmPool } from './pool.js';
import { FairQueue } from './queue.js';
import { type RunRequest, SandboxProcess, SandboxStartError } from './sandbox-process.js';
import type {
  CodeRunner,
  ExecutionOutcome,
  ExecutionRequest,
  SandboxConfig,
  SandboxHealth,
  SandboxQueueState,
} from './types.js';

const MIB = 1024 * 1024;
const HEALTH_TIMEOUT_MS = 10_000;

/** The CodeRunner behind `createSandbox`: host check, warm pool, fair bounded queue, one sandbox per call. */
export class SandboxRunner implements CodeRunner {
  private readonly config: SandboxConfig;
  private readonly queue: FairQueue;
  private readonly running = new Set<SandboxProcess>();
  private preparing: Promise<{ pool: WarmPool; setup: HostSetup }> | null = null;
  private pool: WarmPool | null = null;
  private closed = false;

  constructor(overrides: Partial<SandboxConfig> = {}) {
    this.config = resolveSandboxConfig(overrides);
    this.queue = new FairQueue(this.config);
    // Warm the pool right away so the first request is already fast; failures surface on use.
    this.prepare().catch(() => {});
  }

  async execute(request: ExecutionRequest, signal?: AbortSignal): Promise<ExecutionOutcome> {
    validateRequest(request);
    const { pool } = await this.prepare();
    const release = await this.queue.acquire(request.accountId, signal);
    try {
      this.assertOpen();
      const runRequest: RunRequest = {
        code: request.code,
        timeoutMs: request.timeoutSeconds * 1000,
        // A backstop behind the wall-clock timeout, for CPU burnt where the timer cannot see it.
        cpuSeconds: Math.ceil(request.timeoutSeconds) + 1,
      };
      try {
        return await this.runIn(pool.take(), runRequest, signal);
      } catch (error) {
        if (!(error instanceof SandboxStartError)) throw error;
        // A warm sandbox can die on its own (killed from outside); one cold retry tells that apart
        // from a host where sandboxes cannot start at all.
        try {
          return await this.runIn(this.launch((await this.prepare()).setup), runRequest, signal);
        } catch (retryError) {
          if (retryError instanceof SandboxStartError) throw sandboxUnavailable(retryError.message);
          throw retryError;
        }
      }
    } finally {
      release();
    }
  }

  queueState(): SandboxQueueState {
    return { active: this.queue.activeCount, queued: this.queue.queuedCount };
  }

  async health(): Promise<SandboxHealth> {
    try {
      this.assertOpen();
      const { setup } = await this.prepare();
      const outcome = await this.runIn(this.launch(setup), {
        code: 'print(1)',
        timeoutMs: HEALTH_TIMEOUT_MS,
        cpuSeconds: HEALTH_TIMEOUT_MS / 1000,
      });
      if (outcome.kind === 'completed' && outcome.output === '1\n' && outcome.error === null) {
        return { ok: true, detail: `bubblewrap sandbox ran print(1) with ${setup.pythonPath} (${setup.bwrapPath})` };
      }
      const problem =
        outcome.kind === 'timeout' ? 'timed out' : (outcome.error ?? `printed ${JSON.stringify(outcome.output)}`);
      return { ok: false, detail: `sandbox started but print(1) failed: ${problem}` };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ok: false, detail: message };
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const running = [...this.running];
    await Promise.all([this.pool?.close(), ...running.map((sandbox) => sandbox.dispose())]);
  }

  /** Checks the host once (success is cached; a failure is retried on the next call) and starts the pool. */
  private prepare(): Promise<{ pool: WarmPool; setup: HostSetup }> {
    if (this.preparing === null) {
      const preparing = inspectHost(this.config).then((setup) => {
        const pool = new WarmPool(this.config.poolSize, () => this.launch(setup));
        this.pool = pool;
        if (this.closed) void pool.close();
        else pool.fill();
        return { pool, setup };
      });
      preparing.catch(() => {
        this.preparing = null;
      });
      this.preparing = preparing;
    }
    return this.preparing;
  }

  private launch(setup: HostSetup): SandboxProcess {
    const spec: SandboxLaunchSpec = {
      bwrapPath: setup.bwrapPath,
      pythonPath: setup.pythonPath,
      rootEntries: setup.rootEntries,
      memoryBytes: this.config.memoryLimitMb * MIB,
      fileSizeBytes: this.config.maxFileSizeMb * MIB,
      workDirBytes: this.config.workDirSizeMb * MIB,
      workDirMaxFiles: this.config.workDirMaxFiles,
      maxProcesses: this.config.maxProcesses,
      maxOpenFiles: this.config.maxOpenFiles,
      errorLimitChars: this.config.outputLimitBytes,
    };
    return new SandboxProcess(spec, this.config.outputLimitBytes);
  }

  private async runIn(sandbox: SandboxProcess, request: RunRequest, signal?: AbortSignal): Promise<ExecutionOutcome> {
    this.running.add(sandbox);
    try {
      return await sandbox.run(request, signal);
    } finally {
      this.running.delete(sandbox);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new AppError('SANDBOX_UNAVAILABLE', 'The Python sandbox is shutting down');
  }
}

function validateRequest(request: ExecutionRequest): void {
  if (typeof request.code !== 'string') {
    throw new AppError('INVALID_PARAMETER', 'code must be a string');
  }
  if (typeof request.accountId !== 'string' || request.accountId === '') {
    throw new AppError('INVALID_PARAMETER', 'accountId must be a non-empty string');
  }
  if (
    typeof request.timeoutSeconds !== 'number' ||
    !Number.isFinite(request.timeoutSeconds) ||
    request.timeoutSeconds <= 0
  ) {
    throw new AppError('INVALID_PARAMETER', 'timeoutSeconds must be a positive number');
  }
}
