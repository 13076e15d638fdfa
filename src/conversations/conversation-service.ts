import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import { type ConversationPort, newId, type ResponseStore } from '../responses/index.js';
import { alreadyHeld, completed, itemsToAdd } from './items.js';
import type { ConversationInputItem, ConversationRecord, ConversationStore, StoredItem, Tenant } from './types.js';

export interface ConversationServiceDeps {
  store: ConversationStore;
  /** The end user's stored response items, which an `item_reference` names. */
  responses: Pick<ResponseStore, 'items'>;
  clock: Clock;
}

export interface ItemListing {
  order: 'asc' | 'desc';
  after: string | undefined;
  limit: number;
}

function noConversation(id: string): AppError {
  return new AppError('NOT_FOUND', `No conversation ${id}`, { field: 'conversation_id' });
}

function noItem(conversation: ConversationRecord, itemId: string): AppError {
  return new AppError('NOT_FOUND', `No item ${itemId} in conversation ${conversation.id}`, { field: 'item_id' });
}

/**
 * Conversations: their metadata and their items, kept in order. Items are checked when they are added (as a
 * response reads them), so a response continuing the conversation (`ConversationPort`, which this implements
 * for the responses service) reads whatever it holds. Which caller may see a conversation is the operations'
 * business; this takes the conversation once found.
 */
export class ConversationService implements ConversationPort {
  readonly #deps: ConversationServiceDeps;

  constructor(deps: ConversationServiceDeps) {
    this.#deps = deps;
  }

  async create(
    tenant: Tenant,
    items: readonly ConversationInputItem[],
    metadata: Record<string, string>,
  ): Promise<ConversationRecord> {
    const added = await itemsToAdd(this.#deps.responses, tenant, [], items);
    const conversation: ConversationRecord = {
      id: newId('conv'),
      tenant,
      createdAt: Math.floor(this.#deps.clock() / 1000),
      metadata,
    };
    await this.#deps.store.create(conversation, added);
    return conversation;
  }

  /**
   * The account's conversation, or 404 naming `conversation_id`; with `onlyUser`, only that end user's (another
   * end user's is refused as an absent one: nothing tells the caller it exists).
   */
  async get(accountId: string, id: string, onlyUser: string | null = null): Promise<ConversationRecord> {
    const found = await this.#deps.store.get(accountId, id);
    if (!found || (onlyUser !== null && found.tenant.userId !== onlyUser)) throw noConversation(id);
    return found;
  }

  async setMetadata(c: ConversationRecord, metadata: Record<string, string>): Promise<ConversationRecord> {
    if (!(await this.#deps.store.setMetadata(c.tenant.accountId, c.id, metadata))) throw noConversation(c.id);
    return { ...c, metadata };
  }

  async delete(c: ConversationRecord): Promise<void> {
    if (!(await this.#deps.store.delete(c.tenant.accountId, c.id))) throw noConversation(c.id);
  }

  /** Appends the items, each with its id (given or made); a given id the conversation holds is 400. */
  async add(c: ConversationRecord, given: readonly ConversationInputItem[]): Promise<StoredItem[]> {
    const existing = await this.#deps.store.items(c.id);
    const items = await itemsToAdd(this.#deps.responses, c.tenant, existing, given);
    const result = await this.#deps.store.append(c.tenant, c.id, items, 'refuse');
    if (result.status === 'absent') throw noConversation(c.id);
    if (result.status === 'duplicate') throw alreadyHeld(items, result.id);
    return result.items;
  }

  async list(c: ConversationRecord, listing: ItemListing): Promise<{ items: StoredItem[]; hasMore: boolean }> {
    const page = await this.#deps.store.page(c.id, listing.order, listing.after, listing.limit);
    if (page.afterMissing) {
      throw new AppError('NOT_FOUND', `No item ${listing.after} in conversation ${c.id}`, { field: 'after' });
    }
    return { items: page.items, hasMore: page.hasMore };
  }

  async item(c: ConversationRecord, itemId: string): Promise<StoredItem> {
    const found = await this.#deps.store.item(c.id, itemId);
    if (!found) throw noItem(c, itemId);
    return found;
  }

  /**
   * Deletes one item. A function_call that a function_call_output of the conversation answers is refused (400):
   * without it the output would answer nothing, and every later response in the conversation would be refused.
   */
  async deleteItem(c: ConversationRecord, itemId: string): Promise<void> {
    const items = await this.#deps.store.items(c.id);
    const target = items.find((i) => i.id === itemId);
    if (!target) throw noItem(c, itemId);
    const callId = target.item.type === 'function_call' ? target.item.call_id : undefined;
    if (callId !== undefined) {
      const calls = items.filter((i) => i.item.type === 'function_call' && i.item.call_id === callId);
      const answered = items.some((i) => i.item.type === 'function_call_output' && i.item.call_id === callId);
      if (answered && calls.length === 1) {
        throw new AppError(
          'INVALID_PARAMETER',
          `Item ${itemId} is a function_call a function_call_output of the conversation answers: delete that output first`,
          { field: 'item_id', reason: 'is a function_call answered in the conversation' },
        );
      }
    }
    if (!(await this.#deps.store.deleteItem(c.id, itemId))) throw noItem(c, itemId);
  }

  /** ConversationPort: what a response continuing the conversation starts from; another end user's is absent. */
  async items(tenant: Tenant, id: string): Promise<Array<Record<string, unknown>> | undefined> {
    const found = await this.#deps.store.get(tenant.accountId, id);
    if (!found || found.tenant.userId !== tenant.userId) return undefined;
    return (await this.#deps.store.items(id)).map((i) => ({ ...i.item, id: i.id }));
  }

  /**
   * ConversationPort: a finished response's input then output, in one transaction; nothing when the conversation
   * is gone meanwhile (deleted, erased). An item the conversation already holds (an input item passed back with
   * its id) is not added twice: the conversation holds each item once.
   */
  async append(tenant: Tenant, id: string, items: readonly StoredItem[]): Promise<void> {
    await this.#deps.store.append(tenant, id, items.map(completed), 'skip');
  }
}
