import { AppError } from '../errors/index.js';
import { newId, type ResponseStore, readInput, referencedIds } from '../responses/index.js';
import type { ConversationInputItem, StoredItem, Tenant } from './types.js';

/** The id prefix of an item a conversation makes, by type, as OpenAI's items are named. */
const PREFIXES: Readonly<Record<string, string>> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  file_search_call: 'fs',
  web_search_call: 'ws',
  code_interpreter_call: 'ci',
  reasoning: 'rs',
  compaction: 'cmp',
};

/**
 * An item without an id gets one of its kind's prefix before it is read (the reader itself would name every
 * item but an output `msg_`). An `item_reference` keeps none: it becomes the item it names, with that item's id.
 */
function identified(given: ConversationInputItem): ConversationInputItem {
  const item = given as Record<string, unknown>;
  if (typeof item.id === 'string') return given;
  const type = typeof item.type === 'string' ? item.type : item.role !== undefined ? 'message' : undefined;
  if (type === undefined || type === 'item_reference') return given;
  return { ...given, id: newId(PREFIXES[type] ?? 'item') };
}

/** A message the client added without a status is as complete as one a response made: it says so. */
export function completed(stored: StoredItem): StoredItem {
  const { item } = stored;
  if (item.type !== 'message' || item.status !== undefined) return stored;
  return { id: stored.id, item: { ...item, status: 'completed' } };
}

/** The call ids of the conversation's function calls: what an added function_call_output may answer. */
function callIdsOf(items: readonly StoredItem[]): Set<string> {
  return new Set(
    items.flatMap(({ item }) =>
      item.type === 'function_call' && typeof item.call_id === 'string' ? [item.call_id] : [],
    ),
  );
}

/**
 * Items to add to a conversation, read as a response would read them, so that the conversation never holds an
 * item a later response would refuse: the same 400s, naming `items[i]…` (an unsupported content part, an image
 * outside a user message, a function_call_output answering no call of the conversation or of the items before it,
 * a compaction this service did not make). An `item_reference` is resolved now, among the end user's stored
 * responses, to a copy of the item it names: the conversation then holds the item itself, whatever becomes of that
 * response.
 */
export async function itemsToAdd(
  responses: Pick<ResponseStore, 'items'>,
  tenant: Tenant,
  existing: readonly StoredItem[],
  given: readonly ConversationInputItem[],
): Promise<StoredItem[]> {
  const items = given.map(identified);
  const resolved = await responses.items(tenant, referencedIds(items));
  // Images are checked for their shape (in a user message, with an image_url) and kept: whether a model reads them
  // is the response's to say, as the conversation may be continued on any model.
  const read = readInput(items, resolved, { field: 'items', knownCallIds: callIdsOf(existing), images: true });
  const seen = new Set<string>();
  for (const [i, { id }] of read.items.entries()) {
    if (seen.has(id)) {
      throw new AppError('INVALID_PARAMETER', `items[${i}].id ${id} is given twice`, {
        field: `items[${i}].id`,
        reason: 'is given twice',
      });
    }
    seen.add(id);
  }
  return read.items.map(completed);
}

/** The refusal of an item whose id the conversation already holds. */
export function alreadyHeld(given: readonly StoredItem[], id: string): AppError {
  const field = `items[${given.findIndex((i) => i.id === id)}].id`;
  return new AppError('INVALID_PARAMETER', `${field} ${id} is already in the conversation`, {
    field,
    reason: 'is already in the conversation',
  });
}
