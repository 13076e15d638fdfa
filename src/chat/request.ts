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
