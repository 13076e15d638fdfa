import { AppError } from '../errors/index.js';
import { randomHex128 } from '../kernel/index.js';
import type { ChatMessage, ToolCall } from '../providers/index.js';
import { openSummary, summaryTurn } from './compaction-item.js';
import type { InputItem, StoredItem } from './types.js';

/** `prefix_` + 32 hex digits, as OpenAI's ids look (`resp_`, `msg_`, `fc_`, …). */
export function newId(prefix: string): string {
  return `${prefix}_${randomHex128()}`;
}

/** Items of an earlier output passed back that say nothing the conversation's messages need. */
const HISTORY_ONLY = new Set(['file_search_call', 'web_search_call', 'code_interpreter_call', 'reasoning']);
/** Content parts read as text. */
const TEXT_PARTS = new Set(['input_text', 'output_text', 'text']);

function bad(field: string, reason: string, message = `${field} ${reason}`): AppError {
  return new AppError('INVALID_PARAMETER', message, { field, reason });
}

/** A message's content as text: a string, or its text parts joined (OpenAI's own rendering); any other part refused. */
function textOf(content: unknown, field: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw bad(field, 'is required');
  let text = '';
  for (const [i, part] of (content as Array<{ type: string; text?: unknown; refusal?: unknown }>).entries()) {
    if (part.type === 'refusal' && typeof part.refusal === 'string') {
      text += part.refusal;
      continue;
    }
    if (!TEXT_PARTS.has(part.type)) {
      throw new AppError(
        'UNSUPPORTED_CONTENT',
        `${field}[${i}] is a part of type ${part.type}: the models here read text only (input_text parts or a string)`,
        { field: `${field}[${i}]`, part_type: part.type },
      );
    }
    if (typeof part.text !== 'string') throw bad(`${field}[${i}].text`, 'is required');
    text += part.text;
  }
  return text;
}

/** What a function_call_output carries: a string, or its text parts (any other part refused, as in a message). */
function outputText(output: unknown, field: string): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) throw bad(field, 'must be a string or a list of input_text parts');
  return textOf(output, field);
}

export interface ReadInput {
  messages: ChatMessage[];
  /** The request's items as stored, each with an id (given or made). */
  items: StoredItem[];
}

export interface ReadOptions {
  /**
   * The `call_id`s of the function calls the conversation already holds before this input: a
   * `function_call_output` must answer one of them or a `function_call` of the input before it.
   */
  knownCallIds?: ReadonlySet<string>;
  /** Where the items are, for a refusal's field: `input` (default) or, say, a conversation's items. */
  field?: string;
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
      items: [{ id, item: { id, type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] } }],
    };
  }
  const messages: ChatMessage[] = [];
  const items: StoredItem[] = [];
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
    items.push({ id, item: { ...item, id, ...(type ? { type } : {}) } });
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
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: outputText(item.output, `${field}.output`) });
      return;
    }
    if (type !== undefined && HISTORY_ONLY.has(type)) return;
    if (type === 'compaction') {
      messages.push({
        role: 'system',
        content: summaryTurn(openSummary(item.encrypted_content, `${field}.encrypted_content`)),
      });
      return;
    }
    if (type !== 'message') throw bad(`${field}.type`, 'is required (or a role for a message)');
    const role = item.role === 'developer' ? 'system' : item.role;
    if (role !== 'user' && role !== 'assistant' && role !== 'system') throw bad(`${field}.role`, 'is required');
    messages.push({ role, content: textOf(item.content, `${field}.content`) });
  });
  flushCalls();
  return { messages, items };
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
