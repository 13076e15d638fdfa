import { AppError } from '../errors/index.js';
import { randomHex128 } from '../kernel/index.js';
import type { ChatMessage, ToolCall } from '../providers/index.js';
import { openSummary, summaryTurn } from './compaction-item.js';
import { contentOf, textOf } from './input-content.js';
import type { InputItem, StoredItem } from './types.js';

/** `prefix_` + 32 hex digits, as OpenAI's ids look (`resp_`, `msg_`, `fc_`, …). */
export function newId(prefix: string): string {
  return `${prefix}_${randomHex128()}`;
}

/** Items of an earlier output passed back that say nothing the conversation's messages need. */
const HISTORY_ONLY = new Set([
  'file_search_call',
  'web_search_call',
  'code_interpreter_call',
  'reasoning',
  'mcp_list_tools',
  'mcp_call',
  'mcp_approval_request',
]);

function bad(field: string, reason: string, message = `${field} ${reason}`): AppError {
  return new AppError('INVALID_PARAMETER', message, { field, reason });
}

/** What a function_call_output carries: a string, or its text parts (any other part refused, as in a message). */
function outputText(output: unknown, field: string, images: boolean): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) throw bad(field, 'must be a string or a list of input_text parts');
  return textOf(output, field, images);
}

/** The client's answer to an `mcp_approval_request` (`mcp_approval_response`). */
export interface McpApproval {
  requestId: string;
  approve: boolean;
  reason?: string;
  field: string;
}

export interface ReadInput {
  messages: ChatMessage[];
  /** The `mcp_approval_response` items, in order. */
  approvals: McpApproval[];
  /** The request's items as stored, each with an id (given or made). */
  items: StoredItem[];
}

/**
 * A message item as it is stored and listed (`input_items`, a conversation's items): its content as parts — a
 * string is one `input_text` part, `output_text` for the assistant — and a status, as OpenAI lists them and its
 * SDKs type them (`item.content[0].text`).
 */
function listedMessage(item: Record<string, unknown>): Record<string, unknown> {
  const text = item.content;
  const content =
    typeof text !== 'string'
      ? text
      : [item.role === 'assistant' ? { type: 'output_text', text, annotations: [] } : { type: 'input_text', text }];
  return { ...item, content, status: item.status ?? 'completed' };
}

export interface ReadOptions {
  /**
   * The `call_id`s of the function calls the conversation already holds before this input: a
   * `function_call_output` must answer one of them or a `function_call` of the input before it.
   */
  knownCallIds?: ReadonlySet<string>;
  /** Where the items are, for a refusal's field: `input` (default) or, say, a conversation's items. */
  field?: string;
  /**
   * The routed model reads images: a user message's `input_image` parts reach it as chat's `image_url` parts.
   * Otherwise (the default) every image is refused naming its part (`input-content.ts`).
   */
  images?: boolean;
}

/**
 * `input` → chat messages. A string is one user turn. Items: messages (`developer` as `system`), a
 * `function_call` as the assistant's tool call (consecutive calls one assistant turn), a
 * `function_call_output` as the tool's answer (to a call made before it, else 400 naming its `call_id`), a
 * `compaction` as the summary it carries (a system turn), an `item_reference` as the item it names
 * (`resolved`, looked up beforehand among the end user's stored items); items of an earlier output that carry no
 * turn (a search, a run of code, reasoning) are kept as items but add no message.
 */
export function readInput(
  input: string | InputItem[],
  resolved: ReadonlyMap<string, Record<string, unknown>>,
  options: ReadOptions = {},
): ReadInput {
  const at = options.field ?? 'input';
  if (typeof input === 'string') {
    const id = newId('msg');
    return {
      messages: [{ role: 'user', content: input }],
      approvals: [],
      items: [{ id, item: { id, type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] } }],
    };
  }
  const messages: ChatMessage[] = [];
  const items: StoredItem[] = [];
  const approvals: McpApproval[] = [];
  const pendingCalls: ToolCall[] = [];
  const callIds = new Set(options.knownCallIds ?? []);
  const flushCalls = () => {
    if (pendingCalls.length === 0) return;
    messages.push({ role: 'assistant', content: null, tool_calls: pendingCalls.splice(0) });
  };
  input.forEach((given, i) => {
    const field = `${at}[${i}]`;
    let item = given as Record<string, unknown>;
    // OpenAI's item_reference may leave out its type: an item that is nothing but an id is one.
    const reference =
      item.type === 'item_reference' ||
      (item.type === undefined && item.role === undefined && typeof item.id === 'string');
    if (reference) {
      const found = typeof item.id === 'string' ? resolved.get(item.id) : undefined;
      if (!found) {
        throw bad(
          `${field}.id`,
          'names no item of a stored response of this end user',
          `${field}.id names no stored item`,
        );
      }
      item = found;
    }
    const type = (item.type as string | undefined) ?? (item.role ? 'message' : undefined);
    const id = typeof item.id === 'string' ? item.id : newId(type === 'function_call_output' ? 'fco' : 'msg');
    items.push({
      id,
      item: type === 'message' ? listedMessage({ ...item, id, type }) : { ...item, id, ...(type ? { type } : {}) },
    });
    if (type === 'function_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string') throw bad(field, 'needs call_id and name');
      callIds.add(item.call_id);
      pendingCalls.push({
        id: item.call_id,
        type: 'function',
        function: { name: item.name, arguments: typeof item.arguments === 'string' ? item.arguments : '{}' },
      });
      return;
    }
    flushCalls();
    if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') throw bad(`${field}.call_id`, 'is required');
      if (!callIds.has(item.call_id)) {
        throw bad(
          `${field}.call_id`,
          'names no function_call before it in the conversation',
          `${field}.call_id ${item.call_id} answers no function_call of the conversation`,
        );
      }
      messages.push({
        role: 'tool',
        tool_call_id: item.call_id,
        content: outputText(item.output, `${field}.output`, options.images === true),
      });
      return;
    }
    if (type !== undefined && HISTORY_ONLY.has(type)) return;
    if (type === 'mcp_approval_response') {
      if (typeof item.approval_request_id !== 'string') throw bad(`${field}.approval_request_id`, 'is required');
      if (typeof item.approve !== 'boolean') throw bad(`${field}.approve`, 'is required');
      const reason = typeof item.reason === 'string' ? { reason: item.reason } : {};
      approvals.push({ requestId: item.approval_request_id, approve: item.approve, ...reason, field });
      return;
    }
    if (type === 'compaction') {
      // A compaction of a conversation of the user's own messages only holds no notes: nothing to add.
      const summary = openSummary(item.encrypted_content, `${field}.encrypted_content`);
      if (summary) messages.push({ role: 'system', content: summaryTurn(summary) });
      return;
    }
    if (type !== 'message') throw bad(`${field}.type`, 'is required (or a role for a message)');
    const role = item.role === 'developer' ? 'system' : item.role;
    if (role !== 'user' && role !== 'assistant' && role !== 'system') throw bad(`${field}.role`, 'is required');
    const reading = { images: options.images === true, role: item.role as string };
    messages.push({ role, content: contentOf(item.content, `${field}.content`, reading) });
  });
  flushCalls();
  return { messages, approvals, items };
}

/** The ids an input names through `item_reference`, to look up before reading it. */
export function referencedIds(input: string | InputItem[]): string[] {
  if (typeof input === 'string') return [];
  return input.flatMap((item) => {
    const i = item as { type?: string; role?: string; id?: unknown };
    const reference = i.type === 'item_reference' || (i.type === undefined && i.role === undefined);
    return reference && typeof i.id === 'string' ? [i.id] : [];
  });
}
