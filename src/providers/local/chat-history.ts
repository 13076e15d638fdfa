import type { ChatHistoryItem, ChatModelFunctionCall, ChatModelFunctions, ChatModelResponse } from 'node-llama-cpp';
import { contentText, hasImage } from '../content.js';
import { type ChatMessage, ProviderError, type ToolDefinition } from '../types.js';
import { jsonSchemaToGbnf } from './json-schema-to-gbnf.js';

/**
 * Renders OpenAI chat messages as node-llama-cpp chat history, so the model's own chat wrapper
 * formats tool calls and their results in the model's native syntax.
 *
 * Mapping:
 * - an assistant message's `tool_calls` (or legacy `function_call`) become `functionCall` items;
 * - the `tool` messages answering them (matched by `tool_call_id`) and legacy `function` messages
 *   (matched by name) become those items' `result`s;
 * - an assistant message that follows tool results continues the same model turn, which is how
 *   node-llama-cpp represents "call → result → answer";
 * - a result nobody asked for (no matching call) is shown to the model as user text.
 */
export function toChatHistory(messages: readonly ChatMessage[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = [];
  // Calls of the latest model turn that still wait for their result.
  let openCalls: Array<{ id: string | undefined; call: ChatModelFunctionCall }> = [];
  // The model turn that an assistant message may continue (after tool results only).
  let continuableTurn: ChatModelResponse | undefined;

  for (const message of messages) {
    const content = textOf(message);
    switch (message.role) {
      case 'system':
        history.push({ type: 'system', text: content });
        continuableTurn = undefined;
        break;
      case 'user':
        history.push({ type: 'user', text: content });
        continuableTurn = undefined;
        break;
      case 'assistant': {
        const calls = assistantCalls(message);
        const turn: ChatModelResponse = continuableTurn ?? { type: 'model', response: [] };
        if (!continuableTurn) history.push(turn);
        if (content !== '') turn.response.push(content);
        for (const { id, name, args } of calls) {
          const call: ChatModelFunctionCall = {
            type: 'functionCall',
            name,
            params: parseJsonOr(args, args),
            result: undefined,
          };
          turn.response.push(call);
          openCalls.push({ id, call });
        }
        continuableTurn = calls.length > 0 ? turn : undefined;
        if (calls.length === 0) openCalls = [];
        break;
      }
      case 'tool':
      case 'function': {
        const pending =
          message.role === 'tool'
            ? openCalls.find(
                ({ id, call }) =>
                  (id !== undefined && id === message.tool_call_id) || (id === undefined && call.name === message.name),
              )
            : openCalls.find(({ call }) => call.name === message.name);
        if (pending) {
          pending.call.result = parseJsonOr(content, content);
          openCalls = openCalls.filter((entry) => entry !== pending);
        } else {
          const label = message.name ?? message.tool_call_id ?? 'tool';
          history.push({ type: 'user', text: `Result of ${label}: ${content}` });
          continuableTurn = undefined;
        }
        break;
      }
    }
  }

  // Generation continues the last model turn when it ended in calls (the answer follows the results);
  // otherwise it starts a fresh, empty model turn.
  const last = history.at(-1);
  const continuesLastTurn =
    last?.type === 'model' && last.response.at(-1) !== undefined && typeof last.response.at(-1) !== 'string';
  if (!continuesLastTurn) history.push({ type: 'model', response: [] });
  return history;
}

/** Tool definitions as node-llama-cpp "available functions" (documented in the system prompt by the wrapper). */
export function toAvailableFunctions(tools: readonly ToolDefinition[]): ChatModelFunctions {
  const functions: Record<string, ChatModelFunctions[string]> = {};
  for (const { function: fn } of tools) {
    functions[fn.name] = {
      ...(fn.description !== undefined ? { description: fn.description } : {}),
      ...(fn.parameters !== undefined && hasProperties(fn.parameters)
        ? { params: jsonSchemaToGbnf(fn.parameters) }
        : {}),
    };
  }
  return functions;
}

function hasProperties(parameters: Record<string, unknown>): boolean {
  const properties = parameters.properties;
  return typeof properties === 'object' && properties !== null && Object.keys(properties).length > 0;
}

interface AssistantCall {
  id: string | undefined;
  name: string;
  args: string;
}

function assistantCalls(message: ChatMessage): AssistantCall[] {
  const calls: AssistantCall[] = (message.tool_calls ?? []).map((call) => ({
    id: call.id,
    name: call.function.name,
    args: call.function.arguments,
  }));
  if (message.function_call)
    calls.push({ id: undefined, name: message.function_call.name, args: message.function_call.arguments });
  return calls;
}

/**
 * A message's text. The engine reads text only: a route with a local target never reads images, so chat and
 * responses refuse an image before routing; one reaching here is a defect, refused rather than dropped unseen.
 */
function textOf(message: ChatMessage): string {
  if (hasImage(message.content)) throw new ProviderError('bad-request', 'the local engine reads text only, not images');
  return contentText(message.content);
}

function parseJsonOr(text: string, fallback: unknown): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}
