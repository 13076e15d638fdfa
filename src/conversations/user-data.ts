import { paged, type UserDataSection } from '../users/index.js';
import type { ConversationStore } from './types.js';
import { conversationBody, itemBody } from './wire.js';

/** Conversations per page of an export (each comes with all its items). */
const PAGE_CONVERSATIONS = 20;

/**
 * The `conversations` section of an end user's data: each conversation with its items, oldest first, read a page
 * of conversations at a time; the erase deletes them with their items (a later `conversation` naming one is
 * 404). Responses made in them are the `responses` section's.
 */
export function conversationsUserData(store: ConversationStore): UserDataSection<'conversations'> {
  return {
    name: 'conversations',
    async *export(tenant) {
      const pages = paged(
        (after: string | undefined, limit) => store.tenantPage(tenant, after, limit),
        (c) => c.conversation.id,
        PAGE_CONVERSATIONS,
      );
      for await (const { conversation, items } of pages) {
        yield { conversation: conversationBody(conversation), items: items.map(itemBody) };
      }
    },
    erase: (tenant) => store.deleteTenant(tenant),
  };
}
