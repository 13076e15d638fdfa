import type { Logger } from 'pino';
import type { Clock } from '../../clock/index.js';
import { AppError } from '../../errors/index.js';
import type { RequestRecord } from '../../http/index.js';
import type { Principal } from '../../kernel/index.js';
import { JobPump } from '../../storage/index.js';
import { isTerminalEvent } from '../events.js';
import type { PreparedResponse } from '../prepare.js';
import {
  type Accounting,
  ResponseCancelledError,
  type ResponsesService,
  type RunOutcome,
} from '../responses-service.js';
import type { ResponseStore } from '../types.js';
import { asAppError, endedBody, isEnded, keyRevoked, serverStopped, terminalEvent } from './ending.js';
import { type EventHub, StoredEventSink } from './event-log.js';
import type { RunRecord, SqlBackgroundRuns } from './run-store.js';

export interface BackgroundOptions {
  /**
   * A run's lease, renewed every third of it while the run goes on: a run whose server stopped is ended
   * `failed` by the next worker once it ran out (a restarted SQLite owner voids its leases at start).
   */
  leaseMs: number;
  /** How often an idle worker looks for runs another replica queued, or a stopped server left. */
  pollMs: number;
  /** How often the cancel flags of this worker's runs are read: a cancel asked on another replica. */
  cancelPollMs: number;
  /** Runs at once on this replica (a run mostly waits on its model). */
  concurrency: number;
}

export const DEFAULT_BACKGROUND: Readonly<BackgroundOptions> = Object.freeze({
  leaseMs: 30_000,
  pollMs: 1000,
  cancelPollMs: 200,
  concurrency: 16,
});

/** Why a run is aborted when its worker found its lease taken: another worker ends it. */
class LeaseLost extends Error {}
/** Why a run is aborted when this server stops. */
class Stopping extends Error {}

/** What running a background response needs from the rest of the service (BackgroundResponses is given it too). */
export interface BackgroundRunPorts {
  store: ResponseStore;
  responses: Pick<ResponsesService, 'prepare' | 'run' | 'startingBody'>;
  /** The account and key that created a response, or undefined when the key is revoked (or gone). */
  principalOf(accountId: string, keyId: string): Promise<Principal | undefined>;
  /** The usage row of a run that made model calls (the POST that queued it has its own, of 0 credits). */
  recordUsage(row: RequestRecord): unknown;
  clock: Clock;
  logger: Logger;
  /** This process alone writes the database (SQLite owner): leases left by a previous run are void. */
  soleWorker: boolean;
  /** The server is stopping: nothing more is claimed (another replica, or the next start, runs what is queued). */
  draining(): boolean;
}

export interface BackgroundWorkerDeps extends BackgroundRunPorts {
  runs: SqlBackgroundRuns;
  hub: EventHub;
  /** This replica's name on the leases it holds. */
  owner: string;
  options: BackgroundOptions;
}

/**
 * Runs background responses from their durable queue on any replica: claims a run under a lease, acts as the
 * key that created it, prepares its request again (with the same id and items), marks it `in_progress` before
 * its first model call, and runs it into its stored event log; renews its lease and reads its cancel flag while
 * it runs. A run found `in_progress` under a lease that ran out was on a server that stopped: it is ended
 * `failed` (`ending.ts`), never run twice, since its model calls may have been charged.
 */
export class BackgroundWorker {
  readonly #deps: BackgroundWorkerDeps;
  readonly #pump: JobPump;
  readonly #running = new Map<string, AbortController>();
  readonly #tasks = new Set<Promise<void>>();
  #watch: NodeJS.Timeout | undefined;
  #watching = false;
  #renewedAt = 0;

  constructor(deps: BackgroundWorkerDeps) {
    this.#deps = deps;
    this.#pump = new JobPump(() => this.#drain(), {
      pollMs: deps.options.pollMs,
      onError: (err) => deps.logger.error({ err }, 'claiming a background response failed'),
    });
  }

  async start(): Promise<void> {
    if (this.#deps.soleWorker) await this.#deps.runs.releaseLeases();
    const { cancelPollMs, leaseMs } = this.#deps.options;
    this.#watch = setInterval(() => void this.#watchRuns(), Math.min(cancelPollMs, leaseMs / 3));
    this.#watch.unref();
    this.#pump.start();
  }

  kick(): void {
    this.#pump.kick();
  }

  /** Aborts the run of `id` if this replica runs it (it then ends `cancelled`); says whether it does. */
  cancelHere(id: string): boolean {
    const controller = this.#running.get(id);
    controller?.abort(new ResponseCancelledError());
    return controller !== undefined;
  }

  /**
   * Stops claiming; the runs under way are aborted and ended `failed` (the server stopped) now rather than
   * after their lease, and those not started yet are left queued for another replica or the next start.
   */
  async close(): Promise<void> {
    if (this.#watch) clearInterval(this.#watch);
    await this.#pump.close();
    for (const controller of this.#running.values()) controller.abort(new Stopping());
    await Promise.allSettled([...this.#tasks]);
  }

  /** Ends a run without running it: `cancelled`, or `failed` with `end`. Nothing when its lease is lost. */
  async endWithout(run: RunRecord, end: 'cancelled' | AppError, sink?: StoredEventSink): Promise<void> {
    const { runs, store, clock, hub, owner } = this.#deps;
    const id = run.responseId;
    const events = sink ? await sink.take() : [];
    const last = events.at(-1) ?? (await runs.lastEvent(id));
    const stored = await store.get(run.tenant.accountId, id);
    if (!stored || (last && isTerminalEvent(last.type))) {
      await runs.end(id, owner, events);
    } else if (isEnded(stored.body.status)) {
      // Its run stored the final response and its server stopped before the last event: that event now.
      await runs.end(id, owner, [...events, terminalEvent(stored.body, (last?.sequence_number ?? -1) + 1)]);
    } else {
      const body = endedBody(stored.body, end, clock());
      await runs.end(id, owner, [...events, terminalEvent(body, (last?.sequence_number ?? -1) + 1)], body);
    }
    hub.notify(id);
  }

  async #drain(): Promise<void> {
    const { runs, clock, options, owner, logger } = this.#deps;
    while (!this.#pump.closed && !this.#deps.draining() && this.#running.size < options.concurrency) {
      const run = await runs.claim(clock(), options.leaseMs, owner);
      if (!run) return;
      const controller = new AbortController();
      this.#running.set(run.responseId, controller);
      const task: Promise<void> = this.#execute(run, controller.signal)
        .catch((err: unknown) => logger.error({ err, response: run.responseId }, 'a background response failed'))
        .finally(() => {
          this.#running.delete(run.responseId);
          this.#tasks.delete(task);
          this.kick();
        });
      this.#tasks.add(task);
    }
  }

  async #execute(run: RunRecord, signal: AbortSignal): Promise<void> {
    const { runs, responses, owner, hub } = this.#deps;
    const id = run.responseId;
    // Its server stopped while it ran: never run again (its model calls may have been charged).
    if (run.state === 'in_progress') return this.endWithout(run, run.cancelRequested ? 'cancelled' : serverStopped());
    if (run.cancelRequested || signal.reason instanceof ResponseCancelledError) {
      return this.endWithout(run, 'cancelled');
    }
    const principal = await this.#deps.principalOf(run.tenant.accountId, run.keyId);
    if (!principal) return this.endWithout(run, keyRevoked());
    let prepared: PreparedResponse;
    try {
      prepared = await responses.prepare(principal, run.request.body, {
        codeTimeoutSeconds: run.request.codeTimeoutSeconds,
        identity: { id, createdAt: run.request.createdAt },
      });
    } catch (err) {
      // What changed since it was queued (a previous response deleted, a conversation gone) ends it.
      return this.endWithout(run, asAppError(err));
    }
    if (signal.reason instanceof Stopping) return runs.release(id, owner);
    // False: a cancel came first (or the lease is lost, and then nothing is written).
    if (!(await runs.start(id, owner, responses.startingBody(prepared, 'in_progress')))) {
      return this.endWithout(run, 'cancelled');
    }
    hub.notify(id);
    const sink = new StoredEventSink(runs, hub, id, ((await runs.lastEvent(id))?.sequence_number ?? -1) + 1);
    const began = performance.now();
    let accounting: Accounting | undefined;
    let outcome: RunOutcome;
    try {
      const started = await responses.run(principal, prepared, signal, sink, { firstSequence: sink.next });
      accounting = started.accounting;
      outcome = await started.done;
    } catch (err) {
      // The first model call failed (refunded, as a chat's) or was aborted before its answer began.
      const unexpected = !(err instanceof AppError) && !signal.aborted;
      outcome = { failed: asAppError(err), ...(unexpected ? { cause: err } : {}) };
    }
    const reason: unknown = signal.aborted ? signal.reason : undefined;
    const cancelled = reason instanceof ResponseCancelledError;
    this.#recordUsage(
      run,
      accounting,
      cancelled ? undefined : reason instanceof Stopping ? serverStopped() : outcome.failed,
      began,
    );
    if (sink.failure) this.#deps.logger.warn({ err: sink.failure, response: id }, 'storing response events failed');
    // Another worker took it over (this one was cut off past its lease): that one ends it.
    if (reason instanceof LeaseLost) return;
    if (outcome.record) {
      // Its run stored the final response: the events left and the run's end.
      await runs.end(id, owner, await sink.take());
      hub.notify(id);
    } else if (reason instanceof ResponseCancelledError) await this.endWithout(run, 'cancelled', sink);
    else if (reason instanceof Stopping) await this.endWithout(run, serverStopped(), sink);
    else if (outcome.body && !outcome.clientClosed) {
      // Failed in a way the run did not store (not an AppError): its body as the run made it.
      await runs.end(id, owner, await sink.take(), outcome.body);
      hub.notify(id);
    } else await this.endWithout(run, outcome.failed ?? serverStopped(), sink);
    if (outcome.cause) this.#deps.logger.warn({ err: outcome.cause, response: id }, 'a background response failed');
  }

  /** The run's usage row, as a streamed response's: what its model calls cost and counted. */
  #recordUsage(run: RunRecord, accounting: Accounting | undefined, failed: AppError | undefined, began: number): void {
    const hit = accounting?.cache === 'HIT';
    this.#deps.recordUsage({
      accountId: run.tenant.accountId,
      keyId: run.keyId,
      requestId: run.responseId,
      endpoint: 'createResponse',
      model: run.request.body.model,
      userId: run.tenant.userId,
      status: 200,
      promptTokens: accounting && !hit ? accounting.totals.input : 0,
      completionTokens: accounting && !hit ? accounting.totals.output : 0,
      credits: accounting?.credits ?? 0,
      latencyMs: performance.now() - began,
      failedStatus: failed?.status,
      errorCode: failed?.code,
      cached: hit,
      createdAt: this.#deps.clock(),
    });
  }

  /** Renews the leases of this replica's runs and aborts those whose cancel was asked elsewhere. */
  async #watchRuns(): Promise<void> {
    if (this.#watching || this.#running.size === 0) return;
    this.#watching = true;
    const { runs, owner, clock, options, logger } = this.#deps;
    try {
      for (const id of await runs.cancelled(owner)) this.#running.get(id)?.abort(new ResponseCancelledError());
      if (clock() - this.#renewedAt >= options.leaseMs / 3) {
        this.#renewedAt = clock();
        const ids = [...this.#running.keys()];
        const held = await runs.renew(ids, owner, clock() + options.leaseMs);
        for (const id of ids) if (!held.has(id)) this.#running.get(id)?.abort(new LeaseLost());
      }
    } catch (err) {
      logger.warn({ err }, 'renewing the leases of background responses failed');
    } finally {
      this.#watching = false;
    }
  }
}
