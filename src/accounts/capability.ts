import type { Logger } from 'pino';
import type { Clock } from '../clock/index.js';
import type { Db } from '../storage/index.js';
import { AccountService, type AccountServiceOptions } from './account-service.js';
import { createAccountStore } from './account-store-for.js';
import { adminOperations } from './admin-operations.js';

/** Accounts, keys and credits: the key lookup every request makes, the credits port, and the admin API. */
export function accountsCapability({
  db,
  clock,
  logger,
  authCacheTtlMs,
  refunds,
  tierCeilings,
}: AccountServiceOptions & AccountsDeps) {
  const store = createAccountStore(db, { onError: (err) => logger.error({ err }, 'writing credit charges failed') });
  const service = new AccountService(store, clock, { authCacheTtlMs, refunds, tierCeilings });
  return { name: 'accounts', service, store, operations: adminOperations(service), close: () => service.close() };
}

interface AccountsDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
}
