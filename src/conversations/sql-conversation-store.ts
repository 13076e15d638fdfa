import { type Db, inTransaction, placeholderList, type Row, type Statement, type Steps } from '../storage/index.js';
import type { AppendResult, ConversationRecord, ConversationStore, ItemPage, StoredItem, Tenant } from './types.js';

function toConversation(row: Row): ConversationRecord {
  return {
    id: row.id as string,
    tenant: { accountId: row.account_id as string, userId: row.user_id as string },
    createdAt: Number(row.created_at),
    metadata: JSON.parse(row.metadata as string) as Record<string, string>,
  };
}

function toItem(row: Row): StoredItem {
  return { id: row.id as string, item: JSON.parse(row.item as string) as Record<string, unknown> };
}

function insertItem(conversation: string, tenant: Tenant, ordinal: number, item: StoredItem): Statement {
  return [
    `INSERT INTO conversation_items (conversation_id, ordinal, id, account_id, user_id, item)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [conversation, ordinal, item.id, tenant.accountId, tenant.userId, JSON.stringify(item.item)],
  ];
}

/**
 * Conversations in the service's database (SQLite or PostgreSQL, the same SQL). Items are ordered by an ordinal
 * the conversation row hands out (`next_ordinal`): the UPDATE that takes the next ones also locks the row on
 * PostgreSQL, so two appends to one conversation take turns, and an append to a conversation deleted meanwhile
 * finds no row and adds nothing. Deletes remove the conversation before its items for the same reason: an
 * append under way holds the row, and the items' DELETE, a statement after it, sees what that append added.
 */
export class SqlConversationStore implements ConversationStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async create(c: ConversationRecord, items: readonly StoredItem[]): Promise<void> {
    await inTransaction(this.#db, function* () {
      yield [
        `INSERT INTO conversations (id, account_id, user_id, created_at, metadata, next_ordinal)
         VALUES ($1, $2, $3, $4, $5, $6)`,
        [c.id, c.tenant.accountId, c.tenant.userId, c.createdAt, JSON.stringify(c.metadata), items.length],
      ];
      for (const [ordinal, item] of items.entries()) yield insertItem(c.id, c.tenant, ordinal, item);
    });
  }

  async get(accountId: string, id: string): Promise<ConversationRecord | undefined> {
    const [row] = await this.#db.query(
      'SELECT id, account_id, user_id, created_at, metadata FROM conversations WHERE id = $1 AND account_id = $2',
      [id, accountId],
    );
    return row ? toConversation(row) : undefined;
  }

  async setMetadata(accountId: string, id: string, metadata: Record<string, string>): Promise<boolean> {
    const rows = await this.#db.query(
      'UPDATE conversations SET metadata = $3 WHERE id = $1 AND account_id = $2 RETURNING id',
      [id, accountId, JSON.stringify(metadata)],
    );
    return rows.length > 0;
  }

  delete(accountId: string, id: string): Promise<boolean> {
    return inTransaction(this.#db, function* () {
      const gone = yield ['DELETE FROM conversations WHERE id = $1 AND account_id = $2 RETURNING id', [id, accountId]];
      if (gone.length === 0) return false;
      yield ['DELETE FROM conversation_items WHERE conversation_id = $1', [id]];
      return true;
    });
  }

  append(
    tenant: Tenant,
    id: string,
    items: readonly StoredItem[],
    onDuplicate: 'skip' | 'refuse',
  ): Promise<AppendResult> {
    return inTransaction(this.#db, function* (): Steps<AppendResult> {
      const [held] = yield [
        `UPDATE conversations SET next_ordinal = next_ordinal
         WHERE id = $1 AND account_id = $2 AND user_id = $3 RETURNING next_ordinal`,
        [id, tenant.accountId, tenant.userId],
      ];
      if (!held) return { status: 'absent' };
      const present = new Set<string>();
      if (items.length > 0) {
        const rows = yield [
          `SELECT id FROM conversation_items WHERE conversation_id = $1 AND id IN (${placeholderList(items.length, 2)})`,
          [id, ...items.map((i) => i.id)],
        ];
        for (const row of rows) present.add(row.id as string);
      }
      const added: StoredItem[] = [];
      for (const item of items) {
        if (present.has(item.id)) {
          if (onDuplicate === 'refuse') return { status: 'duplicate', id: item.id };
          continue;
        }
        present.add(item.id);
        added.push(item);
      }
      const first = Number(held.next_ordinal);
      for (const [i, item] of added.entries()) yield insertItem(id, tenant, first + i, item);
      yield ['UPDATE conversations SET next_ordinal = $2 WHERE id = $1', [id, first + added.length]];
      return { status: 'added', items: added };
    });
  }

  async items(id: string): Promise<StoredItem[]> {
    const rows = await this.#db.query(
      'SELECT id, item FROM conversation_items WHERE conversation_id = $1 ORDER BY ordinal',
      [id],
    );
    return rows.map(toItem);
  }

  async item(id: string, itemId: string): Promise<StoredItem | undefined> {
    const [row] = await this.#db.query(
      'SELECT id, item FROM conversation_items WHERE conversation_id = $1 AND id = $2',
      [id, itemId],
    );
    return row ? toItem(row) : undefined;
  }

  async page(id: string, order: 'asc' | 'desc', after: string | undefined, limit: number): Promise<ItemPage> {
    const params: unknown[] = [id, limit + 1];
    let from = '';
    if (after !== undefined) {
      const [row] = await this.#db.query(
        'SELECT ordinal FROM conversation_items WHERE conversation_id = $1 AND id = $2',
        [id, after],
      );
      if (!row) return { afterMissing: true };
      params.push(Number(row.ordinal));
      from = `AND ordinal ${order === 'asc' ? '>' : '<'} $3`;
    }
    // One more than the page: whether there is more is known without counting.
    const rows = await this.#db.query(
      `SELECT id, item FROM conversation_items WHERE conversation_id = $1 ${from}
       ORDER BY ordinal ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT $2`,
      params,
    );
    return { afterMissing: false, items: rows.slice(0, limit).map(toItem), hasMore: rows.length > limit };
  }

  async deleteItem(id: string, itemId: string): Promise<boolean> {
    const gone = await this.#db.query(
      'DELETE FROM conversation_items WHERE conversation_id = $1 AND id = $2 RETURNING id',
      [id, itemId],
    );
    return gone.length > 0;
  }

  async tenantPage(
    tenant: Tenant,
    after: string | undefined,
    limit: number,
  ): Promise<Array<{ conversation: ConversationRecord; items: StoredItem[] }>> {
    const rows = await this.#db.query(
      `SELECT id, account_id, user_id, created_at, metadata FROM conversations
       WHERE account_id = $1 AND user_id = $2 AND id > $3 ORDER BY id LIMIT $4`,
      [tenant.accountId, tenant.userId, after ?? '', limit],
    );
    if (rows.length === 0) return [];
    const items = await this.#db.query(
      `SELECT conversation_id, id, item FROM conversation_items
       WHERE conversation_id IN (${placeholderList(rows.length)}) ORDER BY conversation_id, ordinal`,
      rows.map((r) => r.id),
    );
    const byConversation = new Map<string, StoredItem[]>();
    for (const row of items) {
      const list = byConversation.get(row.conversation_id as string) ?? [];
      list.push(toItem(row));
      byConversation.set(row.conversation_id as string, list);
    }
    return rows.map((row) => ({
      conversation: toConversation(row),
      items: byConversation.get(row.id as string) ?? [],
    }));
  }

  deleteTenant(tenant: Tenant): Promise<number> {
    return inTransaction(this.#db, function* () {
      const params = [tenant.accountId, tenant.userId];
      const gone = yield ['DELETE FROM conversations WHERE account_id = $1 AND user_id = $2 RETURNING id', params];
      yield ['DELETE FROM conversation_items WHERE account_id = $1 AND user_id = $2', params];
      return gone.length;
    });
  }
}
