import { type Db, placeholderList, type Row, transaction } from '../storage/index.js';
import type { ResponseStore, StoredItem, StoredResponse, Tenant } from './types.js';

function toResponse(row: Row, items: Row[]): StoredResponse {
  const of = (kind: string): StoredItem[] =>
    items
      .filter((i) => i.kind === kind)
      .sort((a, b) => Number(a.ordinal) - Number(b.ordinal))
      .map((i) => ({ id: i.id as string, item: JSON.parse(i.item as string) as Record<string, unknown> }));
  return {
    id: row.id as string,
    tenant: { accountId: row.account_id as string, userId: row.user_id as string },
    createdAt: Number(row.created_at),
    body: JSON.parse(row.body as string) as StoredResponse['body'],
    conversation: JSON.parse(row.conversation as string) as StoredResponse['conversation'],
    input: of('input'),
    output: of('output'),
  };
}

/**
 * The statements that store a response with its items (an upsert: its items are replaced whole), for one
 * transaction: `put`'s, or a background response's enqueue with its run.
 */
export function putStatements(r: StoredResponse): Array<[string, unknown[]]> {
  const items = [
    ...r.input.map((item, ordinal) => ({ ...item, kind: 'input', ordinal })),
    ...r.output.map((item, ordinal) => ({ ...item, kind: 'output', ordinal })),
  ];
  return [
    // Its items are replaced whole: a background response's queued row is completed by the same write.
    ['DELETE FROM response_items WHERE response_id = $1', [r.id]],
    [
      `INSERT INTO responses (id, account_id, user_id, created_at, body, conversation) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO UPDATE SET body = excluded.body, conversation = excluded.conversation`,
      [r.id, r.tenant.accountId, r.tenant.userId, r.createdAt, JSON.stringify(r.body), JSON.stringify(r.conversation)],
    ],
    ...items.map((item): [string, unknown[]] => [
      `INSERT INTO response_items (response_id, kind, ordinal, id, account_id, user_id, item)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [r.id, item.kind, item.ordinal, item.id, r.tenant.accountId, r.tenant.userId, JSON.stringify(item.item)],
    ]),
  ];
}

/** Stored responses in the service's database (SQLite or PostgreSQL, the same SQL). */
export class SqlResponseStore implements ResponseStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async put(r: StoredResponse): Promise<void> {
    const statements = putStatements(r);
    // One transaction: a response is never stored without its items, nor its items without it.
    const db = this.#db;
    if (db.dialect === 'sqlite') {
      transaction(db, (tx) => {
        for (const [sql, params] of statements) tx.query(sql, params);
      });
      return;
    }
    await transaction(db, async (tx) => {
      for (const [sql, params] of statements) await tx.query(sql, params);
    });
  }

  async get(accountId: string, id: string): Promise<StoredResponse | undefined> {
    const [row] = await this.#db.query('SELECT * FROM responses WHERE id = $1 AND account_id = $2', [id, accountId]);
    if (!row) return undefined;
    const items = await this.#db.query('SELECT * FROM response_items WHERE response_id = $1', [id]);
    return toResponse(row, items);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const gone = await this.#db.query('DELETE FROM responses WHERE id = $1 AND account_id = $2 RETURNING id', [
      id,
      accountId,
    ]);
    if (gone.length === 0) return false;
    await this.#db.query('DELETE FROM response_items WHERE response_id = $1', [id]);
    return true;
  }

  async items(tenant: Tenant, ids: readonly string[]): Promise<Map<string, Record<string, unknown>>> {
    if (ids.length === 0) return new Map();
    const rows = await this.#db.query(
      `SELECT i.id, i.item FROM response_items i JOIN responses r ON r.id = i.response_id
       WHERE i.account_id = $1 AND i.user_id = $2 AND i.id IN (${placeholderList(ids.length, 3)})
       ORDER BY r.created_at`,
      [tenant.accountId, tenant.userId, ...ids],
    );
    // Oldest first, so the newest holder of an id wins.
    return new Map(rows.map((r) => [r.id as string, JSON.parse(r.item as string) as Record<string, unknown>]));
  }

  async page(tenant: Tenant, after: string | undefined, limit: number): Promise<StoredResponse[]> {
    const rows = await this.#db.query(
      `SELECT * FROM responses WHERE account_id = $1 AND user_id = $2 AND id > $3 ORDER BY id LIMIT $4`,
      [tenant.accountId, tenant.userId, after ?? '', limit],
    );
    if (rows.length === 0) return [];
    const items = await this.#db.query(
      `SELECT * FROM response_items WHERE response_id IN (${placeholderList(rows.length)})`,
      rows.map((r) => r.id),
    );
    return rows.map((row) =>
      toResponse(
        row,
        items.filter((i) => i.response_id === row.id),
      ),
    );
  }

  async deleteTenant(tenant: Tenant): Promise<number> {
    const params = [tenant.accountId, tenant.userId];
    await this.#db.query('DELETE FROM response_items WHERE account_id = $1 AND user_id = $2', params);
    const gone = await this.#db.query(
      'DELETE FROM responses WHERE account_id = $1 AND user_id = $2 RETURNING id',
      params,
    );
    return gone.length;
  }
}
