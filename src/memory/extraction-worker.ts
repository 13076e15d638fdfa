import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Clock } from '../clock/index.js';
import { untilAborted } from '../kernel/index.js';
import { JobPump } from '../storage/index.js';
import { TRACING, tracedJob } from '../tracing/index.js';
import type { ExtractionJob, ExtractionQueue } from './extraction-queue.js';
import type { Extraction, FactExtractor, Tenant } from './types.js';

export interface ExtractionOptions {
  /**
   * A job's lease. Longer than `timeoutMs` (an extraction is abandoned by then), so a live worker never
   * loses its job to another; a crashed worker's job is taken over by another replica once it ran out
   * (a restarted SQLite owner voids its leases at start).
   */
  leaseMs: number;
  /** How long one extraction may run before it is abandoned (and tried again later). */
  timeoutMs: number;
  /** Jobs extracted at once, each of another end user (a user's jobs are taken one at a time, in order). */
  lanes: number;
  /** How often an idle worker looks for jobs another process left (a crash, a replica's burst). */
  pollMs: number;
  /** Attempts before a job that keeps failing is dropped (logged): one bad turn must not block its user. */
  maxAttempts: number;
  /** Wait before a failed job is tried again. */
  retryMs: number;
}

const DEFAULT_EXTRACTION: Readonly<ExtractionOptions> = Object.freeze({
  leaseMs: 15_000,
  timeoutMs: 10_000,
  lanes: 2,
  pollMs: 2000,
  maxAttempts: 3,
  retryMs: 5000,
});

export interface ExtractionWorkerDeps {
  queue: ExtractionQueue;
  extractor: FactExtractor;
  /** Writes what an extraction found into the user's memories (reconciliation). */
  apply(tenant: Tenant, extraction: Extraction): Promise<void>;
  clock: Clock;
  logger: Logger;
  /** This process alone writes the database (SQLite owner): leases left by a previous run are void. */
  soleWorker: boolean;
  options?: Partial<ExtractionOptions> | undefined;
}

/**
 * Runs the durable extraction queue: claims a job under a lease, extracts the turn's facts, reconciles
 * them with the user's memories, then deletes the job. A crash between the reconciliation and the delete
 * runs the job again, which reconciles to no change (a repeated fact is a duplicate, a correction already
 * applied finds its value in place): each turn's facts are stored once.
 */
export class ExtractionWorker {
  readonly #deps: ExtractionWorkerDeps;
  readonly #options: ExtractionOptions;
  readonly #owner = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  readonly #pump: JobPump;

  constructor(deps: ExtractionWorkerDeps) {
    this.#deps = deps;
    this.#options = { ...DEFAULT_EXTRACTION, ...deps.options };
    // Each drain runs `lanes` lanes until none finds a claimable job.
    this.#pump = new JobPump(
      async () => {
        await Promise.all(Array.from({ length: this.#options.lanes }, () => this.#lane()));
      },
      {
        pollMs: this.#options.pollMs,
        onError: (err) => deps.logger.error({ err }, 'memory extraction failed'),
      },
    );
  }

  async start(): Promise<void> {
    if (this.#deps.soleWorker) await this.#deps.queue.releaseLeases();
    this.#pump.start();
  }

  /** Stops claiming, abandons the extractions under way (their jobs stay queued) and waits for them. */
  close(): Promise<void> {
    return this.#pump.close();
  }

  /** Runs jobs until none is claimable; a kick while running makes it look once more. */
  kick(): void {
    this.#pump.kick();
  }

  /** Resolves once the queue is empty (benchmarks, tests): what other replicas hold is waited for too. */
  async settled(): Promise<void> {
    for (;;) {
      this.kick();
      await this.#pump.running;
      if (this.#pump.closed || (await this.#deps.queue.pending()) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async #lane(): Promise<void> {
    const { queue, clock } = this.#deps;
    while (!this.#pump.closed) {
      const job = await queue.claim(clock(), this.#options.leaseMs, this.#owner);
      if (!job) return;
      await (TRACING.on
        ? tracedJob('memory extraction', { 'pvai.job': 'memory_extraction', 'pvai.attempt': job.attempts }, () =>
            this.#run(job),
          )
        : this.#run(job));
    }
  }

  async #run(job: ExtractionJob): Promise<void> {
    const { queue, clock, logger } = this.#deps;
    try {
      const extraction = await this.#extract(job.turn);
      if (this.#pump.closed) return; // abandoned by close(): the job stays, another run takes it
      await this.#deps.apply(job.tenant, extraction);
      await queue.complete(job, this.#owner);
    } catch (err) {
      if (this.#pump.closed) return;
      if (job.attempts >= this.#options.maxAttempts) {
        logger.warn({ err, attempts: job.attempts }, 'memory extraction failed for good; the turn is dropped');
        await queue.complete(job, this.#owner);
      } else {
        logger.warn({ err, attempts: job.attempts }, 'memory extraction failed; it is tried again later');
        await queue.retryLater(job, this.#owner, clock() + this.#options.retryMs);
      }
    }
  }

  /**
   * One turn's extraction, bounded in time and stopped by close(). One cleared timer and one listener per
   * job (not AbortSignal.timeout + AbortSignal.any, which keep a timer and a composite signal alive).
   */
  async #extract(turn: string): Promise<Extraction> {
    const controller = new AbortController();
    const { signal } = controller;
    const onClose = () => controller.abort(this.#pump.signal.reason);
    this.#pump.signal.addEventListener('abort', onClose, { once: true });
    const timer = setTimeout(
      () => controller.abort(new DOMException('memory extraction timed out', 'TimeoutError')),
      this.#options.timeoutMs,
    );
    try {
      // An extractor that hangs and ignores its signal is abandoned all the same.
      return await untilAborted(this.#deps.extractor.extract([turn], signal), signal);
    } finally {
      clearTimeout(timer);
      this.#pump.signal.removeEventListener('abort', onClose);
    }
  }
}
