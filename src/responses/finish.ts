import type { ChatMessage } from '../providers/index.js';
import { storedTurn } from './chain.js';
import type { PreparedResponse } from './prepare.js';
import type { ConversationPort, ResponseBody, ResponseStore, StoredResponse } from './types.js';

/**
 * The response ended: stored (unless `store: false`), and its input and output appended to its conversation
 * when it answered (completed or incomplete). Returns the record with its whole conversation, kept or not (a
 * socket keeps its `store: false` ones whole); the store gets its own turn after its predecessor's.
 */
export async function finishResponse(
  deps: { store: ResponseStore; conversations?: ConversationPort | undefined },
  p: PreparedResponse,
  conversation: ChatMessage[],
  body: ResponseBody,
): Promise<StoredResponse> {
  const record: StoredResponse = {
    id: p.id,
    tenant: p.tenant,
    createdAt: p.createdAt,
    body,
    previousId: null,
    conversation,
    input: p.inputItems,
    output: body.output.map((item) => ({ id: item.id, item: item as Record<string, unknown> })),
  };
  if (p.body.store !== false) await deps.store.put({ ...record, ...storedTurn(p, conversation) });
  const answered = body.status === 'completed' || body.status === 'incomplete';
  if (answered && p.conversationId !== null) {
    await deps.conversations?.append(p.tenant, p.conversationId, [...record.input, ...record.output]);
  }
  return record;
}
