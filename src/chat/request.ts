import { AppError } from '../errors/index.js';
import type { RequestBody } from '../http/index.js';
import type { AttributeFilter, ModelId } from '../kernel/index.js';
import {
  type ChatMessage,
  contentText,
  type RoutedRequest,
  type ToolChoice,
  type ToolDefinition,
} from '../providers/index.js';
import { type ReadContentOptions, readContent } from './content.js';

/** The body of POST /z1/chat/completions, as the contract's schema admits it (generated). */
export type ChatCompletionBody = RequestBody<'createChatCompletion'>;

/**
 * The request as the chat pipeline (cache key, context sources, routing) sees it, whatever shape a client
 * sent: the end user named, every message's content as text (or, on a route that reads images, a user turn with
 * an image as its parts), `developer` turns as `system`, one answer limit in `max_tokens`.
 */
export type ChatCompletionRequest = Omit<
  ChatCompletionBody,
  'model' | 'user_id' | 'user' | 'messages' | 'max_completion_tokens'
> & {
  /** The PV model the request's name (an id or an alias) stands for. */
  model: ModelId;
  user_id: string;
  messages: ChatMessage[];
  /**
   * Set by the Responses API's `file_search` (not part of the chat contract): documents whose metadata pass
   * the filter, chunks of at least this relevance (0–1, `documents/`'s normalised fused score).
   */
  rag_filter?: AttributeFilter;
  rag_min_score?: number;
  /** Set by the Responses API's `web_search` (`search_context_size`): the pages read at most. */
  web_pages?: number;
  /** Set by the Responses API's `web_search` (`filters.allowed_domains`): only results on these domains. */
  web_domains?: string[];
  /**
   * False for a follow-up model call of one response (after its code ran): the user's turn was already
   * handed to the sources that learn from it (memory extraction) by the first call.
   */
  learn?: boolean;
};

/**
 * The conversation's last user message, its text alone (an image has none): what the answer is about, and so what
 * documents and the web are searched for and what memory learns from.
 */
export function lastUserText(request: ChatCompletionRequest): string {
  const { messages } = request;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as ChatMessage;
    if (m.role === 'user' && m.content !== null) return contentText(m.content);
  }
  return '';
}

/** The contract's default sampling temperature. */
export const DEFAULT_TEMPERATURE = 0.7;

type BodyMessage = ChatCompletionBody['messages'][number];

function messageOf(message: BodyMessage, index: number, options: ReadContentOptions): ChatMessage {
  const content = readContent(message.content, `messages[${index}].content`, message.role, options);
  // OpenAI's successor to `system` (o-series models and newer SDKs send it): a system turn to every engine,
  // so an upstream that predates the role is not refused.
  const role = message.role === 'developer' ? 'system' : message.role;
  return { ...(message as Omit<ChatMessage, 'role' | 'content'>), role, content };
}

/** No end user named and none bound to the key: 400 naming `user_id`, as before `user` was read. */
export function missingEndUser(): AppError {
  return new AppError('INVALID_PARAMETER', "user_id is required (or OpenAI's user field naming the end user)", {
    field: 'user_id',
    reason: 'is required',
  });
}

/**
 * The contract's chat body → the pipeline's request, for the end user `endUser` (the one it names, or its key's:
 * `requiredEndUserOf`). Refusals: a content part the routed model cannot read (400 UNSUPPORTED_CONTENT: an image
 * unless `options.images`). Both answer limits given: the smaller holds.
 */
export function normalizeChatRequest(
  body: ChatCompletionBody,
  { model, endUser }: { model: ModelId; endUser: string },
  options: ReadContentOptions = { images: false },
): ChatCompletionRequest {
  const { user: _user, user_id: _userId, max_completion_tokens, messages, ...rest } = body;
  const limits = [rest.max_tokens, max_completion_tokens].filter((n): n is number => n !== undefined);
  return {
    ...rest,
    model,
    user_id: endUser,
    messages: messages.map((message, i) => messageOf(message, i, options)),
    ...(limits.length > 0 ? { max_tokens: Math.min(...limits) } : {}),
  };
}

/**
 * What the providers need: sampling settings mapped, history passed through turn by turn. The context pvai gathered
 * (`extraSystem`: memory, documents, web) goes after the application's own leading system turns, not before them:
 * what every request of an application shares (its system prompt, its tools) stays the start of the prompt, which
 * an engine that keeps the prompts it has seen (the local engine's sequences, an upstream's prompt cache) reuses.
 */
export function toRoutedRequest(request: ChatCompletionRequest, extraSystem: readonly string[]): RoutedRequest {
  const stop = request.stop === undefined ? undefined : Array.isArray(request.stop) ? request.stop : [request.stop];
  const system: ChatMessage[] = extraSystem.map((content) => ({ role: 'system', content }));
  let leading = 0;
  while (isSystemTurn(request.messages[leading])) leading++;
  // Optional fields assigned, not spread from conditional literals (nine spreads and objects per request).
  const routed: RoutedRequest = {
    messages:
      system.length > 0
        ? [...request.messages.slice(0, leading), ...system, ...request.messages.slice(leading)]
        : request.messages,
    temperature: request.temperature ?? DEFAULT_TEMPERATURE,
  };
  if (request.max_tokens !== undefined) routed.maxTokens = request.max_tokens;
  if (request.top_p !== undefined) routed.topP = request.top_p;
  if (request.seed !== undefined) routed.seed = request.seed;
  if (request.presence_penalty !== undefined) routed.presencePenalty = request.presence_penalty;
  if (request.frequency_penalty !== undefined) routed.frequencyPenalty = request.frequency_penalty;
  if (stop) routed.stop = stop;
  if (request.tools && request.tools.length > 0) routed.tools = request.tools as ToolDefinition[];
  if (request.tool_choice !== undefined) routed.toolChoice = request.tool_choice as ToolChoice;
  if (request.response_format !== undefined) routed.responseFormat = request.response_format;
  return routed;
}

/**
 * A `tool_choice` that names a function must name one of `tools`; with no `tools` it names none of them.
 * One rule for every provider, before anything is charged or routed: 400 INVALID_PARAMETER on the name.
 */
export function checkToolChoice(request: Pick<ChatCompletionRequest, 'tools' | 'tool_choice'>): void {
  const choice = request.tool_choice;
  // A call the model must make, with nothing to call: refused as OpenAI does, not answered in text.
  if (choice === 'required' && (request.tools ?? []).length === 0) {
    throw new AppError(
      'INVALID_PARAMETER',
      'tool_choice is required, but tools is empty: give tools or another tool_choice',
      {
        field: 'tool_choice',
        reason: 'needs tools',
      },
    );
  }
  if (typeof choice !== 'object' || choice === null) return;
  const name = choice.function.name;
  if (request.tools?.some((tool) => tool.function.name === name)) return;
  throw new AppError('INVALID_PARAMETER', `tool_choice names the function ${name}, which is not in tools`, {
    field: 'tool_choice.function.name',
    reason: 'must name one of the functions in tools',
  });
}

/** The wire's `developer` turns are system turns by the time they get here (`messageOf`). */
function isSystemTurn(message: ChatMessage | undefined): boolean {
  return message?.role === 'system';
}
