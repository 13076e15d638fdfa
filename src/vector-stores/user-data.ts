import type { UserDataSection } from '../users/index.js';
import type { SqlVectorStores } from './sql-vector-stores.js';
import type { VectorStoreService } from './vector-store-service.js';
import { storeBody } from './wire.js';

/**
 * The `vector_stores` section of an end user's data: the stores created with their `user_id` (or through their
 * bound key); the erase deletes them with their index entries. The files in them are the `files` section's.
 */
export function vectorStoresUserData(
  service: VectorStoreService,
  rows: SqlVectorStores,
  clock: () => number,
): UserDataSection<'vector_stores'> {
  return {
    name: 'vector_stores',
    async *export(tenant) {
      for (const store of await rows.ownedBy(tenant.accountId, tenant.userId)) {
        yield storeBody(store, await service.usage(store), clock());
      }
    },
    async erase(tenant) {
      const owned = await rows.ownedBy(tenant.accountId, tenant.userId);
      for (const store of owned) await service.delete(store);
      return owned.length;
    },
  };
}
