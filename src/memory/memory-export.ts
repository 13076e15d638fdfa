import { type Db, placeholderList } from '../storage/index.js';
import type { MemoryChange, MemoryRecord, MemorySource, MemoryStore, Tenant } from './types.js';

/** Everything held of one memory of a user: the memory (absent once deleted) and its changes, oldest first. */
export interface MemoryExportEntry {
  id: string;
  memory: MemoryRecord | undefined;
  history: MemoryChange[];
}

/**
 * Reads a user's memories for their export, a page at a time: the ids of every memory the service holds
 * anything of (a memory, or history rows: a deleted memory's history stays until the user is forgotten), in
 * id order, then those memories and their history in one read each.
 */
export class SqlMemoryExport {
  readonly #db: Db;
  readonly #store: Pick<MemoryStore, 'many'>;

  constructor(db: Db, store: Pick<MemoryStore, 'many'>) {
    this.#db = db;
    this.#store = store;
  }

  /** The entries of the memory ids after `after` (all when undefined), at most `limit`, by id. */
  async page(tenant: Tenant, after: string | undefined, limit: number): Promise<MemoryExportEntry[]> {
    const ids = (
      await this.#db.query<{ id: string }>(
        `SELECT id FROM (
           SELECT id FROM memories WHERE account_id = $1 AND user_id = $2 AND id > $3
           UNION SELECT memory_id AS id FROM memory_history WHERE account_id = $1 AND user_id = $2 AND memory_id > $3
         ) AS ids ORDER BY id LIMIT $4`,
        [tenant.accountId, tenant.userId, after ?? '', limit],
      )
    ).map((r) => r.id);
    if (ids.length === 0) return [];
    const memories = new Map((await this.#store.many(tenant, ids)).map((m) => [m.id, m]));
    const history = new Map<string, MemoryChange[]>();
    const rows = await this.#db.query(
      `SELECT memory_id, event, content, previous_content, source, at FROM memory_history
        WHERE account_id = $1 AND user_id = $2 AND memory_id IN (${placeholderList(ids.length, 3)})
        ORDER BY memory_id, seq`,
      [tenant.accountId, tenant.userId, ...ids],
    );
    for (const r of rows) {
      const id = r.memory_id as string;
      const changes = history.get(id) ?? [];
      changes.push({
        event: r.event as MemoryChange['event'],
        content: r.content as string,
        previousContent: (r.previous_content as string | null) ?? null,
        source: r.source as MemorySource,
        at: Number(r.at),
      });
      history.set(id, changes);
    }
    return ids.map((id) => ({ id, memory: memories.get(id), history: history.get(id) ?? [] }));
  }
}
