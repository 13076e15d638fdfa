import { AppError } from '../errors/index.js';
import type { ChatMessage } from '../providers/index.js';
import type { McpToolInfo } from './mcp-toolbox.js';
import type { LocalResponses, ResponseChain, ResponseStore, StoredItem, StoredResponse, Tenant } from './types.js';

/**
 * The most responses a chain of `previous_response_id` holds: reading a response's context walks its chain, so
 * the walk is bounded. An agent of a thousand turns compacts (`POST /z1/responses/compact`) or starts anew.
 */
export const MAX_CHAIN_DEPTH = 1000;
/** The most bytes of conversation (chat messages as JSON) a chain holds: far past any model's context. */
export const MAX_CHAIN_BYTES = 16 * 1024 * 1024;

/** A conversation's size as it is stored and counted against MAX_CHAIN_BYTES. */
export function conversationBytes(messages: readonly ChatMessage[]): number {
  return Buffer.byteLength(JSON.stringify(messages));
}

/** The whole conversation a chain's last response ends: each response's own turn, oldest first. */
export function chainConversation(chain: ResponseChain): ChatMessage[] {
  return chain.responses.flatMap((r) => r.conversation);
}

/**
 * The items a chain's last response was answered from, oldest first: the input and output items of the responses
 * it continues, then its own input (`GET /z1/responses/{id}/input_items`).
 */
export function chainItems(chain: ResponseChain): StoredItem[] {
  const last = chain.responses.length - 1;
  return chain.responses.flatMap((r, i) => (i === last ? r.input : [...r.input, ...r.output]));
}

function previousNotFound(id: string): AppError {
  return new AppError('PREVIOUS_RESPONSE_NOT_FOUND', `Previous response ${id} not found`, {
    field: 'previous_response_id',
  });
}

/** What a response naming `previous_response_id` continues. */
export interface Continued {
  /** The whole conversation so far. */
  history: ChatMessage[];
  /** The stored response the new one links to; null for a socket's `store: false` one (stored whole then). */
  storedId: string | null;
  /** Responses in the chain so far (0 for a socket's own: it keeps its conversation whole). */
  depth: number;
  /** The size of `history` (conversationBytes). */
  bytes: number;
  /** The MCP servers the chain listed (by `server_label`, the latest listing): not listed again. */
  mcpListed: Map<string, McpToolInfo[]>;
}

/** The tools each `mcp_list_tools` item of these outputs lists, by server label (a failed listing is none). */
function mcpListings(outputs: ReadonlyArray<readonly StoredItem[]>): Map<string, McpToolInfo[]> {
  const listed = new Map<string, McpToolInfo[]>();
  for (const output of outputs) {
    for (const { item } of output) {
      if (item.type !== 'mcp_list_tools' || item.error || typeof item.server_label !== 'string') continue;
      if (Array.isArray(item.tools)) listed.set(item.server_label, item.tools as McpToolInfo[]);
    }
  }
  return listed;
}

/**
 * The conversation `id` ends, for the end user: a socket's `store: false` response, else the stored chain walked.
 * 404 PREVIOUS_RESPONSE_NOT_FOUND when it is absent, another end user's, or continues a response since deleted
 * (naming that one: the model never gets a conversation with a hole in it).
 */
export async function continueFrom(
  store: Pick<ResponseStore, 'chain'>,
  tenant: Tenant,
  id: string,
  local?: LocalResponses,
): Promise<Continued> {
  const own = (r: StoredResponse | undefined) =>
    r !== undefined && r.tenant.accountId === tenant.accountId && r.tenant.userId === tenant.userId;
  const kept = local?.get(id);
  if (kept) {
    if (!own(kept)) throw previousNotFound(id);
    return {
      history: kept.conversation,
      storedId: null,
      depth: 0,
      bytes: conversationBytes(kept.conversation),
      mcpListed: mcpListings([kept.output]),
    };
  }
  const chain = await store.chain(tenant.accountId, id);
  // Another end user's conversation is as absent as another account's.
  if (!chain || !own(chain.responses.at(-1))) throw previousNotFound(id);
  if (chain.missing !== null) {
    throw new AppError(
      'PREVIOUS_RESPONSE_NOT_FOUND',
      `Previous response ${id} continues response ${chain.missing}, which was deleted: its conversation is incomplete and cannot be continued. Start a new conversation, with the turns to keep as input`,
      { field: 'previous_response_id', deleted_response_id: chain.missing },
    );
  }
  return {
    history: chainConversation(chain),
    storedId: id,
    depth: chain.depth,
    bytes: chain.contextBytes,
    mcpListed: mcpListings(chain.responses.map((r) => r.output)),
  };
}

/**
 * 400 PREVIOUS_RESPONSE_CHAIN_TOO_LONG when continuing would take the chain past MAX_CHAIN_DEPTH responses or
 * MAX_CHAIN_BYTES of conversation (with `addedBytes`, the new input's): checked before any model call.
 */
export function checkChainLimits(id: string, continued: Continued, addedBytes: number): void {
  if (continued.depth >= MAX_CHAIN_DEPTH) {
    throw new AppError(
      'PREVIOUS_RESPONSE_CHAIN_TOO_LONG',
      `Previous response ${id} ends a chain of ${continued.depth} responses, the most a chain holds (${MAX_CHAIN_DEPTH}): compact it (POST /z1/responses/compact) and continue from the compaction's items`,
      { field: 'previous_response_id', reason: 'chain too long', limit_responses: MAX_CHAIN_DEPTH },
    );
  }
  if (continued.bytes + addedBytes > MAX_CHAIN_BYTES) {
    throw new AppError(
      'PREVIOUS_RESPONSE_CHAIN_TOO_LONG',
      `The conversation of previous response ${id} with this input is ${continued.bytes + addedBytes} bytes, over the ${MAX_CHAIN_BYTES}-byte limit: compact it (POST /z1/responses/compact) and continue from the compaction's items`,
      { field: 'previous_response_id', reason: 'conversation too large', limit_bytes: MAX_CHAIN_BYTES },
    );
  }
}

/**
 * What of a response's conversation is stored: after a stored predecessor, its own turn with the link; else the
 * whole conversation (after a socket's `store: false` response, which is not there to link to).
 */
export function storedTurn(
  from: { storedPrevious: string | null; historyLength: number },
  conversation: ChatMessage[],
): Pick<StoredResponse, 'previousId' | 'conversation'> {
  if (from.storedPrevious === null) return { previousId: null, conversation };
  return { previousId: from.storedPrevious, conversation: conversation.slice(from.historyLength) };
}
