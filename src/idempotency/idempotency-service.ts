import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import type { IdempotencyPort, IdempotentClaim, IdempotentRequest, StoredAnswer } from '../http/index.js';
import { type ChargeNote, type CreditRefund, type CreditsPort, randomHex128 } from '../kernel/index.js';
import type { IdempotencyRecord, SqlIdempotencyStore } from './sql-idempotency-store.js';

export interface IdempotencyOptions {
  clock: Clock;
  windowMs: number;
  maxResponseBytes: number;
  /** How long a duplicate waits for the running request before 409 IDEMPOTENCY_KEY_IN_USE. */
  waitMs: number;
  /** A running claim's lease; renewed every third of it while the request runs. */
  leaseMs: number;
  /** Gives credits back (an abandoned or released attempt's charges). */
  refund(refund: CreditRefund): Promise<void>;
  onError(err: unknown): void;
}

/** A claim this process holds: what its request has charged and not given back. */
interface Running {
  scope: string;
  key: string;
  owner: string;
  refunds: CreditRefund[];
  done: boolean;
}

/** How often a waiting duplicate reads the key's row again. */
const POLL_MS = 50;
/** How often the expired records are swept, at most (by the first claim after it is due). */
const SWEEP_EVERY_MS = 60 * 60 * 1000;

const header = { header: 'Idempotency-Key' };

/** How a keyed request ended at its claim: it ran (a new claim, or an abandoned one taken over), or it was answered. */
export type IdempotencyOutcome = 'executed' | 'taken_over' | 'replayed' | 'reused' | 'in_use' | 'not_stored' | 'lost';

/**
 * Idempotency-Key, exact across replicas: the claim is one INSERT on the (scope, key) primary key; a duplicate
 * reads the row — the same request answered is replayed, another request is 422, a running one is waited for
 * (polling) and then 409, an abandoned one (its lease expired: its process died) is taken over after refunding
 * what the dead attempt had charged. The credits a request charges through `credits()` are noted on its claim
 * in the charge's own atomic write, so a take-over refunds exactly them.
 */
export class IdempotencyService implements IdempotencyPort {
  readonly #scopes = new AsyncLocalStorage<{ claim?: Running }>();
  #nextSweep = 0;
  /** How keyed requests ended at their claim, since the start (`pvai_idempotency_requests_total`). */
  readonly outcomes: Record<IdempotencyOutcome, number> = {
    executed: 0,
    taken_over: 0,
    replayed: 0,
    reused: 0,
    in_use: 0,
    not_stored: 0,
    lost: 0,
  };

  constructor(
    private readonly store: SqlIdempotencyStore,
    private readonly o: IdempotencyOptions,
  ) {}

  get maxResponseBytes(): number {
    return this.o.maxResponseBytes;
  }

  scope<T>(work: () => Promise<T>): Promise<T> {
    return this.#scopes.run({}, work);
  }

  async begin(request: IdempotentRequest): Promise<{ replay: StoredAnswer } | { claim: IdempotentClaim }> {
    const { scope, key } = request;
    const { clock, waitMs, leaseMs, windowMs } = this.o;
    const deadline = clock() + waitMs;
    this.#maybeSweep(clock());
    for (;;) {
      const now = clock();
      const owner = `att_${randomHex128()}`;
      const claim = { ...request, owner, leaseUntil: now + leaseMs, createdAt: now, expiresAt: now + windowMs };
      if (await this.store.insert(claim)) {
        this.outcomes.executed++;
        return { claim: this.#claim(scope, key, owner) };
      }
      const record = await this.store.read(scope, key);
      if (record && record.expiresAt <= now && (await this.store.deleteExpired(scope, key, now))) continue;
      if (record) {
        if (record.fingerprint !== request.fingerprint && !(await sameSettled(record, request))) {
          this.outcomes.reused++;
          throw new AppError(
            'IDEMPOTENCY_KEY_REUSED',
            'The Idempotency-Key header was used with a different request; use a new key for a new request',
            { ...header, endpoint: record.endpoint },
          );
        }
        if (record.status !== null) {
          if (record.body === null || !record.stored) {
            this.outcomes.not_stored++;
            throw notStored(record.status);
          }
          this.outcomes.replayed++;
          return { replay: { status: record.status, headers: record.headers, body: record.body } };
        }
        if (record.owner !== null && record.leaseUntil <= now) {
          const owed = await this.store.takeOver(scope, key, record.owner, owner, now, now + leaseMs);
          if (!owed) continue;
          // The dead attempt's charges stay on the claim until each is given back (refund, then forget).
          for (let left = owed; left.length > 0; ) {
            const [refund, ...rest] = left as [CreditRefund, ...CreditRefund[]];
            await this.o.refund(refund);
            await this.store.setRefunds(scope, key, owner, rest);
            left = rest;
          }
          this.outcomes.taken_over++;
          return { claim: this.#claim(scope, key, owner) };
        }
      }
      if (now >= deadline) {
        this.outcomes.in_use++;
        throw inUse(record ? record.leaseUntil - now : POLL_MS);
      }
      await sleep(Math.min(POLL_MS, deadline - now));
    }
  }

  /**
   * The credits port for paid operations: a keyed request's charge writes "this claim has charged it" atomically
   * with the charge itself (ChargeNote: the same transaction on PostgreSQL, the same turn commit on the embedded
   * ledger), so a process killed at any instant leaves a claim whose take-over refunds exactly what was charged.
   * A request without a claim charges as before (no note, nothing more).
   */
  credits(inner: CreditsPort): CreditsPort {
    return {
      charge: async (payer, amount) => {
        const running = this.#scopes.getStore()?.claim;
        if (!running || running.done) return inner.charge(payer, amount);
        let noted: CreditRefund | undefined;
        const note: ChargeNote = {
          sql: this.store.noteSql,
          params: (refund) => {
            noted = refund;
            running.refunds.push(refund);
            return this.store.noteParams(running.scope, running.key, running.owner, running.refunds);
          },
          lost: () => {
            this.outcomes.lost++;
            return lostClaim();
          },
        };
        try {
          const charged = await inner.charge(payer, amount, note);
          if (!charged.ok && noted) forget(running, noted);
          return charged;
        } catch (err) {
          // Not charged (refused, or its commit failed): nor noted.
          if (noted) forget(running, noted);
          throw err;
        }
      },
      refund: async (refund) => {
        // Given back first, then no longer owed: a kill between them refunds it twice, never charges it twice.
        await inner.refund(refund);
        const running = this.#scopes.getStore()?.claim;
        if (running && forget(running, refund) && !running.done) {
          await this.store.setRefunds(running.scope, running.key, running.owner, running.refunds);
        }
      },
    };
  }

  /** Sweeps the records past their window now; how many. */
  sweep(now: number = this.o.clock()): Promise<number> {
    return this.store.sweep(now);
  }

  #maybeSweep(now: number): void {
    if (now < this.#nextSweep) return;
    this.#nextSweep = now + SWEEP_EVERY_MS;
    this.store.sweep(now).catch((err: unknown) => this.o.onError(err));
  }

  #claim(scope: string, key: string, owner: string): IdempotentClaim {
    const running: Running = { scope, key, owner, refunds: [], done: false };
    const context = this.#scopes.getStore();
    if (context) context.claim = running;
    const { store, o } = this;
    const renewal = setInterval(() => {
      store.renew(scope, key, owner, o.clock() + o.leaseMs).catch((err: unknown) => o.onError(err));
    }, o.leaseMs / 3);
    renewal.unref();
    const end = () => {
      clearInterval(renewal);
      running.done = true;
    };
    return {
      finish: (answer) => {
        end();
        store.finish(scope, key, owner, answer).catch((err: unknown) => o.onError(err));
      },
      release: () => {
        end();
        const owed = running.refunds.splice(0);
        Promise.all(owed.map((refund) => o.refund(refund)))
          .then(() => store.release(scope, key, owner))
          .catch((err: unknown) => o.onError(err));
      },
    };
  }
}

/** A streamed upload answered: the same request when its body hashes as the first attempt's did. */
async function sameSettled(record: IdempotencyRecord, request: IdempotentRequest): Promise<boolean> {
  return record.status !== null && request.settle !== undefined && record.fingerprint === (await request.settle());
}

/** The refund no longer owed by the running claim; whether it was. */
function forget(running: Running, refund: CreditRefund): boolean {
  const at = running.refunds.findIndex((r) => r === refund || sameRefund(r, refund));
  if (at >= 0) running.refunds.splice(at, 1);
  return at >= 0;
}

function sameRefund(a: CreditRefund, b: CreditRefund): boolean {
  return (
    a.accountId === b.accountId && a.amount === b.amount && a.keyId === b.keyId && a.keyPeriodStart === b.keyPeriodStart
  );
}

/** An attempt that stalled past its lease, whose claim another attempt took over, stops before it charges. */
function lostClaim(): AppError {
  return new AppError(
    'IDEMPOTENCY_KEY_IN_USE',
    'Another attempt with this Idempotency-Key took it over while this one was stalled; this one was not charged and stops here: retry to get its answer',
    header,
    { 'Retry-After': '1' },
  );
}

function inUse(waitMs: number): AppError {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new AppError(
    'IDEMPOTENCY_KEY_IN_USE',
    `A request with this Idempotency-Key is still running; retry after ${seconds} second${seconds === 1 ? '' : 's'}`,
    header,
    { 'Retry-After': String(seconds) },
  );
}

function notStored(status: number): AppError {
  return new AppError(
    'IDEMPOTENCY_RESPONSE_NOT_STORED',
    `The request with this Idempotency-Key ran once (status ${status}); its answer was over the size kept, and it will not run again`,
    { ...header, status },
  );
}
