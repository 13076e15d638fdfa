import { type Db, placeholderList, type Row, transaction } from '../storage/index.js';
import { conversationBytes, MAX_CHAIN_DEPTH } from './chain.js';
import type { ResponseChain, ResponseStore, StoredItem, StoredResponse, Tenant } from './types.js';

function toResponse(row: Row, items: readonly Row[]): StoredResponse {
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
    previousId: (row.previous_response_id as string | null) ?? null,
    conversation: JSON.parse(row.conversation as string) as StoredResponse['conversation'],
    input: of('input'),
    output: of('output'),
  };
}

/** Rows of response_items by the response they belong to. */
function byResponse(items: readonly Row[]): Map<string, Row[]> {
  const grouped = new Map<string, Row[]>();
  for (const item of items) {
    const id = item.response_id as string;
    const of = grouped.get(id);
    if (of) of.push(item);
    else grouped.set(id, [item]);
  }
  return grouped;
}

/**
 * The statements that store a response with its items (an upsert: its items are replaced whole), for one
 * transaction: `put`'s, or a background response's enqueue with its run. Its depth and the size of its chain's
 * conversation are its predecessor's plus its own, so that the chain's limits are read from one row.
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
      `INSERT INTO responses
         (id, account_id, user_id, created_at, body, conversation, previous_response_id, chain_depth, context_bytes)
       VALUES ($1, $2, $3, $4, $5, $6, $7,
         COALESCE((SELECT p.chain_depth FROM responses p WHERE p.id = $7 AND p.account_id = $2), 0) + 1,
         COALESCE((SELECT p.context_bytes FROM responses p WHERE p.id = $7 AND p.account_id = $2), 0) + $8)
       ON CONFLICT (id) DO UPDATE SET body = excluded.body, conversation = excluded.conversation,
         previous_response_id = excluded.previous_response_id, chain_depth = excluded.chain_depth,
         context_bytes = excluded.context_bytes`,
      [
        r.id,
        r.tenant.accountId,
        r.tenant.userId,
        r.createdAt,
        JSON.stringify(r.body),
        JSON.stringify(r.conversation),
        r.previousId,
        conversationBytes(r.conversation),
      ],
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

  async chain(accountId: string, id: string): Promise<ResponseChain | undefined> {
    // The links walked in the database: one query for the rows, one for their items, whatever the depth.
    const rows = await this.#db.query(
      `WITH RECURSIVE chain (id, previous_id, n) AS (
         SELECT id, previous_response_id, 0 FROM responses WHERE id = $1 AND account_id = $2
         UNION ALL
         SELECT r.id, r.previous_response_id, c.n + 1 FROM chain c JOIN responses r ON r.id = c.previous_id
         WHERE r.account_id = $2 AND c.n < $3
       )
       SELECT r.*, c.n AS chain_index FROM chain c JOIN responses r ON r.id = c.id ORDER BY c.n DESC`,
      [id, accountId, MAX_CHAIN_DEPTH],
    );
    const head = rows.at(-1);
    if (!head) return undefined;
    const items = byResponse(
      await this.#db.query(
        `SELECT * FROM response_items WHERE response_id IN (${placeholderList(rows.length)})`,
        rows.map((r) => r.id),
      ),
    );
    const responses = rows.map((row) => toResponse(row, items.get(row.id as string) ?? []));
    return {
      responses,
      missing: responses[0]?.previousId ?? null,
      depth: Number(head.chain_depth),
      contextBytes: Number(head.context_bytes),
    };
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
    const items = byResponse(
      await this.#db.query(
        `SELECT * FROM response_items WHERE response_id IN (${placeholderList(rows.length)})`,
        rows.map((r) => r.id),
      ),
    );
    return rows.map((row) => toResponse(row, items.get(row.id as string) ?? []));
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
