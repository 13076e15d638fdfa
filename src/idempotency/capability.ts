import type { Clock } from '../clock/index.js';
import type { Config } from '../config/index.js';
import type { CreditRefund } from '../kernel/index.js';
import type { Db } from '../storage/index.js';
import { IdempotencyService } from './idempotency-service.js';
import { SqlIdempotencyStore } from './sql-idempotency-store.js';
import { idempotencyUserData } from './user-data.js';

/**
 * Idempotency-Key on the contract's POST operations (HttpPorts.idempotency): a retry with the same key and request
 * gets the first answer, run, charged and recorded once, across replicas; records swept past the window and
 * erased with their end user. `service.credits(port)` is the credits port paid operations charge through.
 */
export function idempotencyCapability(deps: {
  db: Db;
  clock: Clock;
  settings: Config['idempotency'];
  refund(refund: CreditRefund): Promise<void>;
  onError(err: unknown): void;
}) {
  const store = new SqlIdempotencyStore(deps.db);
  const { windowHours, maxResponseBytes, waitSeconds, leaseSeconds } = deps.settings;
  const service = new IdempotencyService(store, {
    clock: deps.clock,
    windowMs: windowHours * 3_600_000,
    maxResponseBytes,
    waitMs: waitSeconds * 1000,
    leaseMs: leaseSeconds * 1000,
    refund: deps.refund,
    onError: deps.onError,
  });
  return { name: 'idempotency', service, userData: idempotencyUserData(store) };
}
