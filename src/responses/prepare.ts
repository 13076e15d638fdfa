import { DEFAULT_TEMPERATURE } from '../chat/index.js';
import type { Clock } from '../clock/index.js';
import { AppError } from '../errors/index.js';
import { endUserOf } from '../http/index.js';
import type { Principal } from '../kernel/index.js';
import type { ChatMessage } from '../providers/index.js';
import { type Continued, checkChainLimits, continueFrom, conversationBytes } from './chain.js';
import { newId, readInput, referencedIds } from './input.js';
import { refuseImagesIn } from './input-content.js';
import { type PendingApproval, pendingApprovals } from './mcp-approvals.js';
import type { McpToolInfo } from './mcp-toolbox.js';
import { planResponse, type ResponsePlan } from './request.js';
import type {
  ConversationPort,
  InputItem,
  LocalResponses,
  ResponseCreateBody,
  ResponseStore,
  StoredItem,
  Tenant,
} from './types.js';

/** A request read and checked, before any model call: what every way of answering it runs. */
export interface PreparedResponse {
  id: string;
  createdAt: number;
  tenant: Tenant;
  body: ResponseCreateBody;
  plan: ResponsePlan;
  /** The request's own input items, each with its id (given or made): stored, and appended to its conversation. */
  inputItems: StoredItem[];
  /** The conversation the response continues and is appended to, when the request named one. */
  conversationId: string | null;
  /** The stored response of `previous_response_id` the response links to (null: none, or a socket's own). */
  storedPrevious: string | null;
  /** How many messages of `plan.conversation` are the history it continues (not stored again with it). */
  historyLength: number;
  /** The answer limit applied: the request's `max_output_tokens`, else the route's default. */
  maxOutputTokens: number;
  /** The temperature applied: the request's, else the route's, else the contract's 0.7. */
  temperature: number;
  /** The sandbox's timeout for code the model runs (the tier's default). */
  codeTimeoutSeconds: number;
  /** The MCP servers the chain listed already, and the calls its last turn left waiting for approval. */
  mcp: { listed: ReadonlyMap<string, McpToolInfo[]>; pending: PendingApproval[] };
}

export interface PrepareDeps {
  store: ResponseStore;
  conversations?: ConversationPort | undefined;
  clock: Clock;
  /** The answer limit of a model's route, when a request sets none. */
  defaultMaxOutputTokens(model: ResponseCreateBody['model']): number;
  /** The temperature of a model's route, when a request sets none (undefined: the contract's). */
  defaultTemperature?(model: ResponseCreateBody['model']): number | undefined;
  /** Whether a model's route reads images (`input_image` parts); text only when absent. */
  readsImages?(model: ResponseCreateBody['model']): boolean;
}

export interface PrepareOptions {
  codeTimeoutSeconds: number;
  /** Responses kept outside the store (a WebSocket's `store: false` ones), looked up first. */
  local?: LocalResponses | undefined;
  /** The id and creation time the response already has (a background response run after it was queued). */
  identity?: { id: string; createdAt: number } | undefined;
}

/** The call ids a conversation's assistant turns hold: what a function_call_output may answer. */
function callIdsOf(messages: readonly ChatMessage[]): Set<string> {
  return new Set(messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
}

/** The `conversation` field's id, whichever form it was given in. */
function conversationIdOf(body: ResponseCreateBody): string | null {
  const c = body.conversation;
  if (c === undefined || c === null) return null;
  return typeof c === 'string' ? c : c.id;
}

/**
 * The end user, the conversation the response continues (`previous_response_id`'s stored one, or a
 * `conversation`'s items), its input: 404 for a previous response or a conversation that is not the end user's,
 * 400 for what cannot go together. Nothing is called or stored.
 */
export async function prepareResponse(
  deps: PrepareDeps,
  principal: Principal,
  body: ResponseCreateBody,
  options: PrepareOptions,
): Promise<PreparedResponse> {
  const named = body.user_id ?? body.user ?? body.safety_identifier ?? undefined;
  const field = body.user_id !== undefined ? 'user_id' : body.user != null ? 'user' : 'safety_identifier';
  const userId = endUserOf(principal, named, field);
  const tenant = { accountId: principal.account.id, userId };
  const conversationId = conversationIdOf(body);
  if (conversationId !== null && body.previous_response_id) {
    throw new AppError('INVALID_PARAMETER', 'conversation and previous_response_id cannot both be given', {
      field: 'conversation',
      reason: 'cannot be given with previous_response_id',
    });
  }
  if (body.background === true && body.store === false) {
    throw new AppError('INVALID_PARAMETER', 'background responses are stored: background needs store', {
      field: 'background',
      reason: 'needs store',
    });
  }
  let history: ChatMessage[] = [];
  /** The ids of the conversation's items: an input item already among them would reach the model twice. */
  let held = new Set<string>();
  let continued: Continued | undefined;
  if (body.previous_response_id) {
    continued = await continueFrom(deps.store, tenant, body.previous_response_id, options.local);
    history = continued.history;
  }
  const images = deps.readsImages?.(body.model) ?? false;
  refuseImagesIn(history, images, 'previous_response_id', body.model);
  if (conversationId !== null) {
    const items = await deps.conversations?.items(tenant, conversationId);
    if (!items) {
      throw new AppError('NOT_FOUND', `No conversation ${conversationId}`, { field: 'conversation' });
    }
    held = new Set(items.flatMap((item) => (typeof item.id === 'string' ? [item.id] : [])));
    const resolvedEarlier = await deps.store.items(tenant, referencedIds(items as InputItem[]));
    history = readInput(items as InputItem[], resolvedEarlier, { field: 'conversation.items', images }).messages;
  }
  const resolved = await deps.store.items(tenant, referencedIds(body.input));
  const { messages, items, approvals } = readInput(body.input, resolved, { knownCallIds: callIdsOf(history), images });
  const pending = pendingApprovals(history, approvals);
  if (continued && body.previous_response_id) {
    checkChainLimits(body.previous_response_id, continued, conversationBytes(messages));
  }
  const repeated = Array.isArray(body.input)
    ? body.input.findIndex((item) => held.has((item as { id?: string }).id ?? ''))
    : -1;
  if (repeated >= 0) {
    throw new AppError(
      'INVALID_PARAMETER',
      `input[${repeated}] is already an item of the conversation: send only new input`,
      {
        field: `input[${repeated}].id`,
        reason: 'is already in the conversation',
      },
    );
  }
  const temperature = body.temperature ?? deps.defaultTemperature?.(body.model) ?? DEFAULT_TEMPERATURE;
  const identity = options.identity ?? { id: newId('resp'), createdAt: Math.floor(deps.clock() / 1000) };
  return {
    ...identity,
    tenant,
    body,
    plan: planResponse(body, userId, history, messages, temperature),
    inputItems: items,
    conversationId,
    storedPrevious: continued?.storedId ?? null,
    historyLength: history.length,
    maxOutputTokens: body.max_output_tokens ?? deps.defaultMaxOutputTokens(body.model),
    temperature,
    codeTimeoutSeconds: options.codeTimeoutSeconds,
    mcp: { listed: continued?.mcpListed ?? new Map(), pending },
  };
}
