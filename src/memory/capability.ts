import type { Db } from '../storage/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { memoryContextSource } from './context-source.js';
import { SqlExtractionQueue } from './extraction-queue.js';
import { SqlMemoryExport } from './memory-export.js';
import { memoryKindOf } from './memory-index.js';
import { MemoryService, type MemoryServiceDeps } from './memory-service.js';
import { memoryOperations } from './operations.js';
import { SqlMemoryStore } from './sql-memory-store.js';
import { memoryUserData } from './user-data.js';

type MemoryDeps = Omit<MemoryServiceDeps, 'store' | 'queue'> & { db: Db; tiers: TierPolicy };

/**
 * Persistent memory per end user: facts extracted from what the user says (queued, in the database), kept in the
 * shared index as their own kind, recalled into chat. `index` is the shared one; memories get their own kind of it.
 */
export function memoryCapability({ db, tiers, index, ...deps }: MemoryDeps) {
  const store = new SqlMemoryStore(db);
  const service = new MemoryService({ ...deps, store, index: memoryKindOf(index), queue: new SqlExtractionQueue(db) });
  return {
    name: 'memory',
    service,
    operations: memoryOperations(service, tiers),
    context: memoryContextSource(service),
    userData: memoryUserData(service, new SqlMemoryExport(db, store), db),
    start: () => service.start(),
    close: () => service.close(),
  };
}
