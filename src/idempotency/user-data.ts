import type { UserDataSection } from '../users/index.js';
import type { SqlIdempotencyStore } from './sql-idempotency-store.js';

/**
 * The `idempotent_requests` section of an end user's data: the keys of the answered requests that named them
 * (their stored answers are not exported: they are the answers the other sections hold). The erase deletes the
 * records with their stored answers; a retry of an erased key runs afresh.
 */
export function idempotencyUserData(store: SqlIdempotencyStore): UserDataSection<'idempotent_requests'> {
  return {
    name: 'idempotent_requests',
    async *export(tenant) {
      for (const row of await store.userRows(tenant.accountId, tenant.userId)) {
        yield {
          key: String(row.idem_key),
          endpoint: String(row.endpoint),
          status: row.status === null ? null : Number(row.status),
          created_at: new Date(Number(row.created_at)).toISOString(),
        };
      }
    },
    erase: (tenant) => store.deleteUser(tenant.accountId, tenant.userId),
  };
}
