import type { ChatMessage, RoutedRequest, ToolChoice, ToolDefinition } from '../providers/index.js';

/** The request body of POST /z1/chat/completions, as the contract's schema admits it. */
export interface ChatCompletionRequest {
  model: string;
  messages: ChatMessage[];
  user_id: string;
  temperature?: number;
  max_tokens?: number;
  stream?: boolean;
  use_rag?: boolean;
  rag_k?: number;
  skip_cache?: boolean;
  use_memory?: boolean;
  use_web_search?: boolean;
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  stop?: string | string[];
  top_p?: number;
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  response_format?: { type: string; json_schema?: Record<string, unknown> };
  stream_options?: { include_usage?: boolean };
  n?: number;
  user?: string;
}

/** The contract's default sampling temperature. */
export const DEFAULT_TEMPERATURE = 0.7;

/** What the providers need: sampling settings mapped, history passed through turn by turn. */
export function toRoutedRequest(request: ChatCompletionRequest, extraSystem: string[]): RoutedRequest {
  const stop = request.stop === undefined ? undefined : Array.isArray(request.stop) ? request.stop : [request.stop];
  const system: ChatMessage[] = extraSystem.map((content) => ({ role: 'system', content }));
  return {
    messages: [...system, ...request.messages],
    temperature: request.temperature ?? DEFAULT_TEMPERATURE,
    ...(request.max_tokens !== undefined ? { maxTokens: request.max_tokens } : {}),
    ...(request.top_p !== undefined ? { topP: request.top_p } : {}),
    ...(request.seed !== undefined ? { seed: request.seed } : {}),
    ...(stop ? { stop } : {}),
    ...(request.tools && request.tools.length > 0 ? { tools: request.tools } : {}),
    ...(request.tool_choice !== undefined ? { toolChoice: request.tool_choice } : {}),
    ...(request.response_format !== undefined ? { responseFormat: request.response_format } : {}),
  };
}
