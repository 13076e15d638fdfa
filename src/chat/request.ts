import { AppError } from '../errors/index.js';
import type { RequestBody } from '../http/index.js';
import type { ChatMessage, RoutedRequest, ToolChoice, ToolDefinition } from '../providers/index.js';

/** The body of POST /z1/chat/completions, as the contract's schema admits it (generated). */
export type ChatCompletionRequest = RequestBody<'createChatCompletion'>;

/** The contract's default sampling temperature. */
export const DEFAULT_TEMPERATURE = 0.7;

/** What the providers need: sampling settings mapped, history passed through turn by turn. */
export function toRoutedRequest(request: ChatCompletionRequest, extraSystem: readonly string[]): RoutedRequest {
  const stop = request.stop === undefined ? undefined : Array.isArray(request.stop) ? request.stop : [request.stop];
  const system: ChatMessage[] = extraSystem.map((content) => ({ role: 'system', content }));
  return {
    // The contract's message schemas are the providers' ChatMessage shapes, written as a oneOf.
    messages: [...system, ...(request.messages as ChatMessage[])],
    temperature: request.temperature ?? DEFAULT_TEMPERATURE,
    ...(request.max_tokens !== undefined ? { maxTokens: request.max_tokens } : {}),
    ...(request.top_p !== undefined ? { topP: request.top_p } : {}),
    ...(request.seed !== undefined ? { seed: request.seed } : {}),
    ...(stop ? { stop } : {}),
    ...(request.tools && request.tools.length > 0 ? { tools: request.tools as ToolDefinition[] } : {}),
    ...(request.tool_choice !== undefined ? { toolChoice: request.tool_choice as ToolChoice } : {}),
    ...(request.response_format !== undefined ? { responseFormat: request.response_format } : {}),
  };
}

/**
 * A `tool_choice` that names a function must name one of `tools`; with no `tools` it names none of them.
 * One rule for every provider, before anything is charged or routed: 400 INVALID_PARAMETER on the name.
 */
export function checkToolChoice(request: Pick<ChatCompletionRequest, 'tools' | 'tool_choice'>): void {
  const choice = request.tool_choice;
  if (typeof choice !== 'object' || choice === null) return;
  const name = choice.function.name;
  if (request.tools?.some((tool) => tool.function.name === name)) return;
  throw new AppError('INVALID_PARAMETER', `tool_choice names the function ${name}, which is not in tools`, {
    field: 'tool_choice.function.name',
    reason: 'must name one of the functions in tools',
  });
}
