import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Principal } from '../../kernel/index.js';
import type { Db } from '../../storage/index.js';
import { storedTurn } from '../chain.js';
import type { ResponseEvent } from '../events.js';
import type { PreparedResponse } from '../prepare.js';
import type { InputItem, ResponseBody, Tenant } from '../types.js';
import { EventHub, follow } from './event-log.js';
import { SqlBackgroundRuns } from './run-store.js';
import { type BackgroundOptions, type BackgroundRunPorts, BackgroundWorker, DEFAULT_BACKGROUND } from './worker.js';

/** How long past a lease a cancel waits for the worker running its response (maybe on another replica) to end it. */
const CANCEL_WAIT_MS = 5000;
/** How often a cancel looks whether its response ended, when its worker runs on another replica. */
const CANCEL_POLL_MS = 100;

export interface BackgroundDeps extends BackgroundRunPorts {
  db: Db;
  options?: Partial<BackgroundOptions> | undefined;
}

/**
 * Background responses (`background: true`): queued in the database with their first events, run by a worker
 * on any replica (`worker.ts`), followed through their stored event log (`event-log.ts`), cancelled wherever
 * they run, and erased with their end user.
 */
export class BackgroundResponses {
  readonly #deps: BackgroundDeps;
  readonly #runs: SqlBackgroundRuns;
  readonly #hub = new EventHub();
  readonly #worker: BackgroundWorker;
  readonly #owner = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  readonly #options: BackgroundOptions;

  constructor(deps: BackgroundDeps) {
    this.#deps = deps;
    this.#runs = new SqlBackgroundRuns(deps.db);
    this.#options = { ...DEFAULT_BACKGROUND, ...deps.options };
    this.#worker = new BackgroundWorker({
      runs: this.#runs,
      store: deps.store,
      hub: this.#hub,
      responses: deps.responses,
      principalOf: deps.principalOf,
      recordUsage: deps.recordUsage,
      clock: deps.clock,
      logger: deps.logger,
      soleWorker: deps.soleWorker,
      draining: deps.draining,
      owner: this.#owner,
      options: this.#options,
    });
  }

  start(): Promise<void> {
    return this.#worker.start();
  }

  /** Stops the worker: see BackgroundWorker.close. */
  close(): Promise<void> {
    return this.#worker.close();
  }

  /**
   * Stores the response `queued` with its run (the request with its input items and their ids, so that the run
   * reads the same items) and its first events, in one transaction; a worker takes it at once. Nothing is charged.
   */
  async enqueue(principal: Principal, p: PreparedResponse): Promise<ResponseBody> {
    const body = this.#deps.responses.startingBody(p, 'queued');
    const events: ResponseEvent[] = [
      { type: 'response.created', sequence_number: 0, response: body },
      { type: 'response.queued', sequence_number: 1, response: body },
    ];
    await this.#runs.enqueue(
      {
        id: p.id,
        tenant: p.tenant,
        createdAt: p.createdAt,
        body,
        ...storedTurn(p, p.plan.conversation),
        input: p.inputItems,
        output: [],
      },
      {
        keyId: principal.key.id,
        request: {
          body: { ...p.body, input: p.inputItems.map((i) => i.item as InputItem) },
          codeTimeoutSeconds: p.codeTimeoutSeconds,
          createdAt: p.createdAt,
        },
        at: this.#deps.clock(),
      },
      events,
    );
    this.#worker.kick();
    return body;
  }

  /** The response's events after `after`, then the live ones until its last (`event-log.ts` follow). */
  events(id: string, after: number, signal: AbortSignal): AsyncGenerator<ResponseEvent> {
    return follow(this.#runs, this.#hub, id, after, signal);
  }

  /**
   * Cancels a background response of the account that has not ended, wherever it runs: running here, its run is
   * aborted now; running on another replica, that worker reads the flag within its poll; queued and not claimed,
   * or its worker stopped (its lease ran out), it ends here (no model call). Waits (bounded: a lease and a few
   * seconds) until it ended, then returns it as stored.
   */
  async cancel(accountId: string, id: string, signal?: AbortSignal): Promise<ResponseBody | undefined> {
    if ((await this.#runs.requestCancel(id)) !== undefined) {
      this.#worker.cancelHere(id);
      await this.#ended(id, signal);
    }
    return (await this.#deps.store.get(accountId, id))?.body;
  }

  /** Before the response is deleted: cancelled if it runs, and its run and events go with it. */
  async forget(accountId: string, id: string): Promise<void> {
    if ((await this.#runs.state(id)) === undefined) return;
    await this.cancel(accountId, id);
    await this.#runs.remove(id);
  }

  /** An end user's erase: their background responses that have not ended are cancelled, then every run and event goes. */
  async eraseTenant(tenant: Tenant): Promise<void> {
    await Promise.all((await this.#runs.pendingOf(tenant)).map((id) => this.cancel(tenant.accountId, id)));
    await this.#runs.removeTenant(tenant);
  }

  /**
   * Resolves once the run is done (or gone), ending it here when no live worker holds it; gives up after the
   * lease and CANCEL_WAIT_MS (a worker cut off from the database).
   */
  async #ended(id: string, signal?: AbortSignal): Promise<void> {
    const { clock } = this.#deps;
    const deadline = performance.now() + this.#options.leaseMs + CANCEL_WAIT_MS;
    const never = new AbortController().signal;
    while (performance.now() < deadline && !signal?.aborted) {
      const state = await this.#runs.state(id);
      if (state === undefined || state === 'done') return;
      const unheld = await this.#runs.claimOne(id, clock(), this.#options.leaseMs, this.#owner);
      if (unheld) return this.#worker.endWithout(unheld, 'cancelled');
      await this.#hub.wait(id, CANCEL_POLL_MS, signal ?? never);
    }
  }
}
