import { type ListPage, ownerScope } from '../files/index.js';
import type { Db, Row } from '../storage/index.js';
import type { BatchRecord, Owner, VectorStoreRecord } from './types.js';

const COLUMNS = `id, account_id, owner_user_id, name, description, metadata, chunk_chars, overlap_chars,
  expires_after_days, last_active_at, expired, created_at`;

function toStore(row: Row): VectorStoreRecord {
  const owner = row.owner_user_id as string;
  return {
    id: row.id as string,
    accountId: row.account_id as string,
    userId: owner === '' ? null : owner,
    name: (row.name as string | null) ?? null,
    description: (row.description as string | null) ?? null,
    metadata: JSON.parse(row.metadata as string) as Record<string, string>,
    chunking:
      row.chunk_chars === null ? null : { chars: Number(row.chunk_chars), overlapChars: Number(row.overlap_chars) },
    expiresAfterDays: row.expires_after_days === null ? null : Number(row.expires_after_days),
    lastActiveAt: Number(row.last_active_at),
    expired: Number(row.expired) === 1,
    createdAt: Number(row.created_at),
  };
}

/** Vector stores and their file batches, both dialects. Every read is scoped by its viewer (account, end user). */
export class SqlVectorStores {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async insert(store: VectorStoreRecord): Promise<void> {
    await this.#db.query(
      `INSERT INTO vector_stores (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, $11)`,
      [
        store.id,
        store.accountId,
        store.userId ?? '',
        store.name,
        store.description,
        JSON.stringify(store.metadata),
        store.chunking?.chars ?? null,
        store.chunking?.overlapChars ?? null,
        store.expiresAfterDays,
        store.lastActiveAt,
        store.createdAt,
      ],
    );
  }

  async get(viewer: Owner, id: string): Promise<VectorStoreRecord | undefined> {
    const s = ownerScope(viewer);
    const rows = await this.#db.query(
      `SELECT ${COLUMNS} FROM vector_stores WHERE ${s.sql} AND id = $${s.params.length + 1}`,
      [...s.params, id],
    );
    return rows[0] ? toStore(rows[0]) : undefined;
  }

  async count(accountId: string): Promise<number> {
    const [row] = await this.#db.query('SELECT COUNT(*) AS n FROM vector_stores WHERE account_id = $1', [accountId]);
    return Number(row?.n ?? 0);
  }

  /** A page in `order` after `after` (or before `before`); the cursor store must be the viewer's. */
  async list(viewer: Owner, page: ListPage, cursor?: VectorStoreRecord): Promise<VectorStoreRecord[]> {
    const s = ownerScope(viewer);
    const params = [...s.params];
    let where = s.sql;
    const asc = page.order === 'asc';
    if (cursor) {
      const forward = page.after !== undefined;
      const cmp = asc === forward ? '>' : '<';
      params.push(cursor.createdAt, cursor.id);
      const [c, i] = [`$${params.length - 1}`, `$${params.length}`];
      where += ` AND (created_at ${cmp} ${c} OR (created_at = ${c} AND id ${cmp} ${i}))`;
    }
    // Paging backwards reads the other way and turns the page round.
    const backwards = cursor !== undefined && page.after === undefined;
    const direction = asc !== backwards ? 'ASC' : 'DESC';
    params.push(page.limit);
    const rows = await this.#db.query(
      `SELECT ${COLUMNS} FROM vector_stores WHERE ${where}
       ORDER BY created_at ${direction}, id ${direction} LIMIT $${params.length}`,
      params,
    );
    const stores = rows.map(toStore);
    return backwards ? stores.reverse() : stores;
  }

  async update(store: VectorStoreRecord): Promise<void> {
    await this.#db.query(
      `UPDATE vector_stores SET name = $2, metadata = $3, expires_after_days = $4, last_active_at = $5, expired = $6
       WHERE id = $1`,
      [
        store.id,
        store.name,
        JSON.stringify(store.metadata),
        store.expiresAfterDays,
        store.lastActiveAt,
        store.expired ? 1 : 0,
      ],
    );
  }

  async touch(id: string, now: number): Promise<void> {
    await this.#db.query('UPDATE vector_stores SET last_active_at = $2 WHERE id = $1 AND last_active_at < $2', [
      id,
      now,
    ]);
  }

  /** Removes the store's rows: itself, its file links and batches (its documents are the service's to remove). */
  async delete(id: string): Promise<void> {
    await this.#db.query('DELETE FROM vector_store_files WHERE vector_store_id = $1', [id]);
    await this.#db.query('DELETE FROM vector_store_file_batches WHERE vector_store_id = $1', [id]);
    await this.#db.query('DELETE FROM vector_stores WHERE id = $1', [id]);
  }

  /** Stores past their expiry not yet swept, any account's. */
  async due(now: number): Promise<VectorStoreRecord[]> {
    const rows = await this.#db.query(
      `SELECT ${COLUMNS} FROM vector_stores
       WHERE expired = 0 AND expires_after_days IS NOT NULL AND last_active_at + expires_after_days * 86400000 <= $1`,
      [now],
    );
    return rows.map(toStore);
  }

  async markExpired(id: string): Promise<void> {
    await this.#db.query('UPDATE vector_stores SET expired = 1 WHERE id = $1', [id]);
  }

  /** The end user's own stores (created with their `user_id`), oldest first. */
  async ownedBy(accountId: string, userId: string): Promise<VectorStoreRecord[]> {
    const rows = await this.#db.query(
      `SELECT ${COLUMNS} FROM vector_stores WHERE account_id = $1 AND owner_user_id = $2 ORDER BY created_at, id`,
      [accountId, userId],
    );
    return rows.map(toStore);
  }

  async insertBatch(batch: BatchRecord): Promise<void> {
    await this.#db.query(
      `INSERT INTO vector_store_file_batches (id, vector_store_id, account_id, cancelled, created_at)
       VALUES ($1, $2, $3, 0, $4)`,
      [batch.id, batch.vectorStoreId, batch.accountId, batch.createdAt],
    );
  }

  async batch(vectorStoreId: string, id: string): Promise<BatchRecord | undefined> {
    const rows = await this.#db.query(
      'SELECT id, vector_store_id, account_id, cancelled, created_at FROM vector_store_file_batches WHERE id = $1 AND vector_store_id = $2',
      [id, vectorStoreId],
    );
    const row = rows[0];
    if (!row) return undefined;
    return {
      id: row.id as string,
      vectorStoreId: row.vector_store_id as string,
      accountId: row.account_id as string,
      cancelled: Number(row.cancelled) === 1,
      createdAt: Number(row.created_at),
    };
  }

  async cancelBatch(id: string): Promise<void> {
    await this.#db.query('UPDATE vector_store_file_batches SET cancelled = 1 WHERE id = $1', [id]);
  }
}
