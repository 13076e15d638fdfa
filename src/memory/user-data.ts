import type { Db } from '../storage/index.js';
import { paged, tableActivity, type UserDataSection } from '../users/index.js';
import type { MemoryExportEntry, SqlMemoryExport } from './memory-export.js';
import type { MemoryService } from './memory-service.js';
import { changeBody, memoryBody } from './operations.js';

/** Memories per page of an export (with their history, a page is a few hundred rows). */
const PAGE_MEMORIES = 100;

/**
 * The `memories` section of an end user's data: every memory the service holds anything of, with its history
 * (a deleted memory's history included: it is held until the user is forgotten). The erase is `forget`: the
 * user's memories, history, index entries, version (so no cached answer keyed by it is served again) and
 * queued extraction.
 */
export function memoryUserData(memory: MemoryService, reader: SqlMemoryExport, db: Db): UserDataSection<'memories'> {
  return {
    name: 'memories',
    // Each end user's current memories; the latest change of one is when memory last saw them.
    activity: { counts: 'memories', list: tableActivity(db, 'memories', 'updated_at') },
    async *export(tenant) {
      const entries = paged(
        (after: string | undefined, limit) => reader.page(tenant, after, limit),
        (e: MemoryExportEntry) => e.id,
        PAGE_MEMORIES,
      );
      for await (const e of entries) {
        yield {
          memory_id: e.id,
          ...(e.memory ? { memory: memoryBody(e.memory) } : {}),
          history: e.history.map(changeBody),
        };
      }
    },
    erase: (tenant) => memory.forget(tenant),
  };
}
