import type BetterSqlite3 from 'better-sqlite3';
import type { Row } from '../../storage/index.js';
import type { Tenant } from '../types.js';

/**
 * The SQL SqlChunkIndex writes with that is not a one-off: the tenant generation bumped inside each
 * write's transaction (both dialects) and SQLite's prepared statements.
 */

export type PgQuery = (sql: string, params: unknown[]) => Promise<Row[]>;

/**
 * A tenant's first generation is random, not 1: forgetting a tenant deletes its generation row (nothing
 * of a forgotten user stays behind), and a later write must not restart at a number another process's
 * cache still holds for the old vectors. Below 2^52, so a PostgreSQL BIGINT reads back as an exact number.
 */
function firstGeneration(): number {
  return 1 + Math.floor(Math.random() * 2 ** 51);
}

/** Bumps the tenant's generation inside the write's transaction; the new value. */
export async function pgBump(q: PgQuery, tenant: Tenant): Promise<number> {
  const rows = await q(
    `INSERT INTO rag_index_tenants (account_id, user_id, generation) VALUES ($1, $2, $3)
     ON CONFLICT (account_id, user_id) DO UPDATE SET generation = rag_index_tenants.generation + 1
     RETURNING generation`,
    [tenant.accountId, tenant.userId, firstGeneration()],
  );
  return Number(rows[0]?.generation);
}

/** SQLite's statements, prepared once (better-sqlite3 is synchronous: each runs in microseconds). */
export function sqliteStatements(sqlite: BetterSqlite3.Database) {
  const tenantDoc = 'account_id = ? AND user_id = ? AND document_id = ?';
  const bump = sqlite.prepare(
    `INSERT INTO rag_index_tenants (account_id, user_id, generation) VALUES (?, ?, ?)
     ON CONFLICT (account_id, user_id) DO UPDATE SET generation = generation + 1 RETURNING generation`,
  );
  const generation = sqlite.prepare('SELECT generation FROM rag_index_tenants WHERE account_id = ? AND user_id = ?');
  return {
    insertChunk: sqlite.prepare(
      'INSERT INTO rag_index_chunks (account_id, user_id, document_id, chunk_id, terms) VALUES (?, ?, ?, ?, ?)',
    ),
    deleteDocument: sqlite.prepare(`DELETE FROM rag_index_chunks WHERE ${tenantDoc}`),
    setVector: sqlite.prepare(`UPDATE rag_index_chunks SET embedding = ? WHERE ${tenantDoc} AND chunk_id = ?`),
    deleteTenant: sqlite.prepare('DELETE FROM rag_index_chunks WHERE account_id = ? AND user_id = ?'),
    deleteGeneration: sqlite.prepare('DELETE FROM rag_index_tenants WHERE account_id = ? AND user_id = ?'),
    /** Inside the write's transaction: the tenant's new generation. */
    bump(tenant: Tenant): number {
      const row = bump.get(tenant.accountId, tenant.userId, firstGeneration()) as { generation: number };
      return Number(row.generation);
    },
    generation(tenant: Tenant): number {
      const row = generation.get(tenant.accountId, tenant.userId) as { generation: number } | undefined;
      return Number(row?.generation ?? 0);
    },
    floats: sqlite.prepare(
      `SELECT chunk_id, embedding FROM rag_index_chunks
       WHERE account_id = ? AND user_id = ? AND chunk_id IN (SELECT value FROM json_each(?)) AND embedding IS NOT NULL`,
    ),
    rows: sqlite.prepare(
      'SELECT chunk_id, document_id, terms, embedding FROM rag_index_chunks WHERE account_id = ? AND user_id = ? ORDER BY seq',
    ),
  };
}
