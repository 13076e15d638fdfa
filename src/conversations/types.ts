import type { Schema } from '../http/index.js';
import type { StoredItem, Tenant } from '../responses/index.js';

export type { StoredItem, Tenant };

export type ConversationBody = Schema<'Conversation'>;
export type ConversationItemBody = Schema<'ConversationItem'>;
export type ConversationInputItem = Schema<'ResponseInputItem'>;

/** A conversation without its items: who it belongs to, when it was made, its metadata. */
export interface ConversationRecord {
  id: string;
  tenant: Tenant;
  /** Unix seconds. */
  createdAt: number;
  metadata: Record<string, string>;
}

/** What adding items came to: the conversation is gone, an id it already holds (refused), or the items added. */
export type AppendResult =
  | { status: 'absent' }
  | { status: 'duplicate'; id: string }
  | { status: 'added'; items: StoredItem[] };

/**
 * Conversations and their items, in order. A conversation is read by its account (the operations narrow it to an
 * end user for a key bound to one); it is added to only as its (account, end user), so that an append racing
 * an erase or a delete adds nothing. Item ids are unique within a conversation.
 */
export interface ConversationStore {
  /** Stores a new conversation with its first items, all or nothing. */
  create(conversation: ConversationRecord, items: readonly StoredItem[]): Promise<void>;
  /** The account's conversation; undefined when another account's or absent. */
  get(accountId: string, id: string): Promise<ConversationRecord | undefined>;
  /** Replaces the metadata; false when the conversation is gone. */
  setMetadata(accountId: string, id: string, metadata: Record<string, string>): Promise<boolean>;
  /** Deletes the conversation with its items; false when it was not there. */
  delete(accountId: string, id: string): Promise<boolean>;
  /**
   * Appends items after the conversation's last, in one transaction, if the conversation is still the tenant's.
   * An item whose id the conversation already holds is skipped (`skip`) or refuses the whole batch (`refuse`).
   */
  append(
    tenant: Tenant,
    id: string,
    items: readonly StoredItem[],
    onDuplicate: 'skip' | 'refuse',
  ): Promise<AppendResult>;
  /** Every item of the conversation, oldest first. */
  items(id: string): Promise<StoredItem[]>;
  /** One item by id. */
  item(id: string, itemId: string): Promise<StoredItem | undefined>;
  /** A page of items strictly after (in the page's order) the item `after`; `limit` at most. */
  page(id: string, order: 'asc' | 'desc', after: StoredItem['id'] | undefined, limit: number): Promise<ItemPage>;
  deleteItem(id: string, itemId: string): Promise<boolean>;
  /** The end user's conversations by id, a page at a time, each with its items oldest first (the export). */
  tenantPage(
    tenant: Tenant,
    after: string | undefined,
    limit: number,
  ): Promise<Array<{ conversation: ConversationRecord; items: StoredItem[] }>>;
  /** Deletes the end user's conversations and their items; returns how many conversations. */
  deleteTenant(tenant: Tenant): Promise<number>;
}

/** A page of items; `afterMissing` when `after` names no item of the conversation. */
export type ItemPage = { afterMissing: true } | { afterMissing: false; items: StoredItem[]; hasMore: boolean };
