import type { ConversationBody, ConversationItemBody, ConversationRecord, StoredItem } from './types.js';

export function conversationBody(c: ConversationRecord): ConversationBody {
  return { id: c.id, object: 'conversation', created_at: c.createdAt, metadata: c.metadata, user_id: c.tenant.userId };
}

/** An item as the API returns it: as stored, under its id (every stored item has its type). */
export function itemBody(stored: StoredItem): ConversationItemBody {
  return { ...stored.item, id: stored.id, type: (stored.item.type as string | undefined) ?? 'message' };
}
