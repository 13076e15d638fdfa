import { randomBytes } from 'node:crypto';
import {
  byIdsFirst,
  type Db,
  type ExternalChanges,
  externalChanges,
  placeholderList,
  type Row,
} from '../storage/index.js';
import type { MemoryChange, MemoryRecord, MemorySource, MemoryStore, Tenant } from './types.js';

const COLUMNS = 'id, account_id, user_id, content, metadata, source, slot, created_at, updated_at';

const versionKey = (tenant: Tenant) => `${tenant.accountId}\u0000${tenant.userId}`;

function toMemory(row: Row): MemoryRecord {
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    userId: row.user_id as string,
    content: row.content as string,
    metadata: JSON.parse(row.metadata as string) as Record<string, unknown>,
    source: row.source as MemorySource,
    slot: (row.slot as string | null) ?? null,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** Users' memory versions held by the owner of an embedded database at most (a bound, not a working set). */
const MAX_KNOWN_VERSIONS = 100_000;

/** Memories and history in the service's database (SQLite or PostgreSQL, the same SQL). */
export class SqlMemoryStore implements MemoryStore {
  readonly #db: Db;
  /**
   * The owner of an embedded database only: each user's memory version as this process last read or wrote
   * it. Every chat request reads its user's version (the cache key and the memory lookup need it), a
   * SQLite statement of ~15 µs, a tenth of the request's CPU; only this store writes versions, and another
   * connection's commit (the CLI) moves the external-change epoch, which drops them all. Replicas sharing
   * PostgreSQL read it every time: another replica may have changed it.
   */
  readonly #versions: { known: Map<string, string>; changes: ExternalChanges; epoch: number } | undefined;

  constructor(db: Db) {
    this.#db = db;
    if (db.dialect === 'sqlite' && db.owned) {
      const changes = externalChanges(db);
      this.#versions = { known: new Map(), changes, epoch: changes.epoch };
    }
  }

  /** The versions known to be current (none once another connection committed), or undefined. */
  #knownVersions(): Map<string, string> | undefined {
    const versions = this.#versions;
    if (!versions) return undefined;
    if (versions.changes.epoch !== versions.epoch) {
      versions.epoch = versions.changes.epoch;
      versions.known.clear();
    }
    if (versions.known.size >= MAX_KNOWN_VERSIONS) versions.known.clear();
    return versions.known;
  }

  async insert(m: MemoryRecord): Promise<void> {
    await this.#db.query(`INSERT INTO memories (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
      m.id,
      m.accountId,
      m.userId,
      m.content,
      JSON.stringify(m.metadata),
      m.source,
      m.slot,
      m.createdAt,
      m.updatedAt,
    ]);
    await this.#record(m, 'add', m.content, null, m.source, m.createdAt);
  }

  async get(tenant: Tenant, id: string): Promise<MemoryRecord | undefined> {
    const rows = await this.#db.query(
      `SELECT ${COLUMNS} FROM memories WHERE id = $1 AND account_id = $2 AND user_id = $3`,
      [id, tenant.accountId, tenant.userId],
    );
    return rows[0] ? toMemory(rows[0]) : undefined;
  }

  async list(tenant: Tenant): Promise<MemoryRecord[]> {
    const rows = await this.#db.query(
      `SELECT ${COLUMNS} FROM memories WHERE account_id = $1 AND user_id = $2 ORDER BY updated_at DESC, id`,
      [tenant.accountId, tenant.userId],
    );
    return rows.map(toMemory);
  }

  async many(tenant: Tenant, ids: readonly string[]): Promise<MemoryRecord[]> {
    if (ids.length === 0) return [];
    const placeholders = placeholderList(ids.length, 3);
    const rows = await this.#db.query(
      `SELECT ${COLUMNS} FROM memories
       WHERE ${byIdsFirst(this.#db)}account_id = $1 AND ${byIdsFirst(this.#db)}user_id = $2 AND id IN (${placeholders})`,
      [tenant.accountId, tenant.userId, ...ids],
    );
    return rows.map(toMemory);
  }

  async inSlot(tenant: Tenant, slot: string): Promise<MemoryRecord[]> {
    const rows = await this.#db.query(
      `SELECT ${COLUMNS} FROM memories WHERE account_id = $1 AND user_id = $2 AND slot = $3
       ORDER BY updated_at DESC, id LIMIT 50`,
      [tenant.accountId, tenant.userId, slot],
    );
    return rows.map(toMemory);
  }

  async update(
    tenant: Tenant,
    id: string,
    change: { content?: string; metadata?: Record<string, unknown>; slot?: string | null },
    source: MemorySource,
    at: number,
  ): Promise<MemoryRecord | undefined> {
    const before = await this.get(tenant, id);
    if (!before) return undefined;
    const after: MemoryRecord = {
      ...before,
      content: change.content ?? before.content,
      metadata: change.metadata ?? before.metadata,
      slot: change.slot === undefined ? before.slot : change.slot,
      updatedAt: at,
    };
    await this.#db.query(
      `UPDATE memories SET content = $1, metadata = $2, slot = $3, updated_at = $4
       WHERE id = $5 AND account_id = $6 AND user_id = $7`,
      [after.content, JSON.stringify(after.metadata), after.slot, at, id, tenant.accountId, tenant.userId],
    );
    const previous = after.content === before.content ? null : before.content;
    await this.#record(after, 'update', after.content, previous, source, at);
    return after;
  }

  async delete(tenant: Tenant, id: string, source: MemorySource, at: number): Promise<boolean> {
    const rows = await this.#db.query(
      `DELETE FROM memories WHERE id = $1 AND account_id = $2 AND user_id = $3 RETURNING ${COLUMNS}`,
      [id, tenant.accountId, tenant.userId],
    );
    const gone = rows[0] ? toMemory(rows[0]) : undefined;
    if (!gone) return false;
    await this.#record(gone, 'delete', gone.content, null, source, at);
    return true;
  }

  async deleteTenant(tenant: Tenant): Promise<number> {
    const params = [tenant.accountId, tenant.userId];
    const rows = await this.#db.query(
      'DELETE FROM memories WHERE account_id = $1 AND user_id = $2 RETURNING id',
      params,
    );
    await this.#db.query('DELETE FROM memory_history WHERE account_id = $1 AND user_id = $2', params);
    // The version row goes too (nothing of the user is left): versions are random tokens, so a later
    // one never repeats a version an old cached answer was keyed with.
    this.#knownVersions()?.delete(versionKey(tenant));
    await this.#db.query('DELETE FROM memory_user_versions WHERE account_id = $1 AND user_id = $2', params);
    return rows.length;
  }

  async history(tenant: Tenant, id: string): Promise<MemoryChange[]> {
    const rows = await this.#db.query(
      `SELECT event, content, previous_content, source, at FROM memory_history
       WHERE account_id = $1 AND user_id = $2 AND memory_id = $3 ORDER BY seq`,
      [tenant.accountId, tenant.userId, id],
    );
    return rows.map((r) => ({
      event: r.event as MemoryChange['event'],
      content: r.content as string,
      previousContent: (r.previous_content as string | null) ?? null,
      source: r.source as MemorySource,
      at: Number(r.at),
    }));
  }

  async version(tenant: Tenant): Promise<string> {
    const known = this.#knownVersions();
    const key = versionKey(tenant);
    const cached = known?.get(key);
    if (cached !== undefined) return cached;
    const rows = await this.#db.query<{ version: string }>(
      'SELECT version FROM memory_user_versions WHERE account_id = $1 AND user_id = $2',
      [tenant.accountId, tenant.userId],
    );
    const version = rows[0]?.version ?? '0';
    known?.set(key, version);
    return version;
  }

  async bumpVersion(tenant: Tenant): Promise<void> {
    const version = randomBytes(9).toString('base64url');
    // Forgotten before the write: a failed write must not leave the new version known.
    this.#knownVersions()?.delete(versionKey(tenant));
    await this.#db.query(
      `INSERT INTO memory_user_versions (account_id, user_id, version) VALUES ($1, $2, $3)
       ON CONFLICT (account_id, user_id) DO UPDATE SET version = $3`,
      [tenant.accountId, tenant.userId, version],
    );
    this.#knownVersions()?.set(versionKey(tenant), version);
  }

  async #record(
    m: MemoryRecord,
    event: MemoryChange['event'],
    content: string,
    previous: string | null,
    source: MemorySource,
    at: number,
  ): Promise<void> {
    await this.#db.query(
      `INSERT INTO memory_history (memory_id, account_id, user_id, event, content, previous_content, source, at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [m.id, m.accountId, m.userId, event, content, previous, source, at],
    );
  }
}
