import { type Call, endUserOf, type Operations, requirePrincipal } from '../http/index.js';
import type { ConversationService } from './conversation-service.js';
import type { ConversationRecord } from './types.js';
import { conversationBody, itemBody } from './wire.js';

type ConversationOperationId =
  | 'createConversation'
  | 'getConversation'
  | 'updateConversation'
  | 'deleteConversation'
  | 'listConversationItems'
  | 'createConversationItems'
  | 'getConversationItem'
  | 'deleteConversationItem';

/**
 * /z1/conversations: a conversation belongs to an account and one of its end users. It is read, changed and
 * deleted by its account (OpenAI's clients name no end user there), except through a key bound to an end user:
 * then only that end user's conversations exist, another's is 404 as another account's is. Each request notes the
 * conversation's end user on its usage row.
 */
export function conversationOperations(deps: {
  conversations: ConversationService;
}): Operations<ConversationOperationId> {
  const { conversations } = deps;
  const owned = async (call: Call, id: string): Promise<ConversationRecord> => {
    const principal = requirePrincipal(call);
    const found = await conversations.get(principal.account.id, id, principal.key.userId);
    call.usage.userId = found.tenant.userId;
    return found;
  };
  return {
    createConversation: async ({ body }, call) => {
      const principal = requirePrincipal(call);
      const named = body?.user_id ?? body?.user ?? undefined;
      const userId = endUserOf(principal, named, body?.user_id !== undefined ? 'user_id' : 'user');
      call.usage.userId = userId;
      const created = await conversations.create(
        { accountId: principal.account.id, userId },
        body?.items ?? [],
        body?.metadata ?? {},
      );
      return { status: 200, body: conversationBody(created) };
    },
    getConversation: async ({ params }, call) => ({
      status: 200,
      body: conversationBody(await owned(call, params.conversation_id)),
    }),
    updateConversation: async ({ params, body }, call) => {
      const found = await owned(call, params.conversation_id);
      return { status: 200, body: conversationBody(await conversations.setMetadata(found, body.metadata ?? {})) };
    },
    deleteConversation: async ({ params }, call) => {
      await conversations.delete(await owned(call, params.conversation_id));
      return { status: 200, body: { id: params.conversation_id, object: 'conversation.deleted', deleted: true } };
    },
    listConversationItems: async ({ params, query }, call) => {
      const found = await owned(call, params.conversation_id);
      const { items, hasMore } = await conversations.list(found, {
        order: query.order ?? 'desc',
        after: query.after,
        limit: query.limit ?? 20,
      });
      return {
        status: 200,
        body: {
          object: 'list',
          data: items.map(itemBody),
          first_id: items[0]?.id ?? null,
          last_id: items.at(-1)?.id ?? null,
          has_more: hasMore,
        },
      };
    },
    createConversationItems: async ({ params, body }, call) => {
      const added = await conversations.add(await owned(call, params.conversation_id), body.items);
      return {
        status: 200,
        body: {
          object: 'list',
          data: added.map(itemBody),
          first_id: added[0]?.id ?? null,
          last_id: added.at(-1)?.id ?? null,
          has_more: false,
        },
      };
    },
    getConversationItem: async ({ params }, call) => {
      const found = await owned(call, params.conversation_id);
      return { status: 200, body: itemBody(await conversations.item(found, params.item_id)) };
    },
    deleteConversationItem: async ({ params }, call) => {
      const found = await owned(call, params.conversation_id);
      await conversations.deleteItem(found, params.item_id);
      return { status: 200, body: conversationBody(found) };
    },
  };
}
