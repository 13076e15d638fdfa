/**
 * The provider contract behind `POST /z1/chat/completions`.
 *
 * Providers speak in typed parts, never in wire strings: the HTTP layer turns a `StreamPart`
 * sequence into OpenAI `chat.completion.chunk` events and a `Completion` into a response body.
 */

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/**
 * A part of a message's content as OpenAI's chat wire has it. Only a route that reads images gets parts (a
 * user turn that holds an image, its parts in order, as the client sent them); every other content is text.
 */
export type ContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: string } };

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool' | 'function';
  content: string | ContentPart[] | null;
  name?: string;
  tool_call_id?: string;
  tool_calls?: ToolCall[];
  /** Legacy (pre-tools) assistant call; answered by a `function` role message. */
  function_call?: { name: string; arguments: string };
}

export interface ToolDefinition {
  type: 'function';
  /** `strict`: the arguments held to `parameters` (the local engine always does, by grammar; an upstream is told). */
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

export interface GenerationRequest {
  /** The target's own model name (upstream model id; informational for local engines). */
  model: string;
  messages: ChatMessage[];
  maxTokens: number;
  temperature: number;
  topP?: number;
  seed?: number;
  /** OpenAI's penalties (-2 to 2) on tokens the answer has used: once each (presence), per use (frequency). */
  presencePenalty?: number;
  frequencyPenalty?: number;
  stop?: string[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  /** OpenAI `response_format`, passed through upstream; local engines honour json_object / json_schema. */
  responseFormat?: unknown;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/**
 * One step of a streamed answer. Order: any number of text/tool-call deltas, then exactly one
 * `finish` — or, when a failure happens after output has started, one `error` as the last part.
 * A failure before the first part is thrown instead (so a router can still fall back).
 */
export type StreamPart =
  | { type: 'text-delta'; text: string }
  /** The first delta of a call carries `id` and `name`; later ones carry argument fragments only. */
  | { type: 'tool-call-delta'; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: 'finish'; finishReason: FinishReason; usage: Usage }
  | { type: 'error'; error: ProviderError };

export interface Completion {
  text: string | null;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage;
}

export interface ChatProvider {
  readonly id: string;
  /** Rejects with a ProviderError, or with the signal's reason when aborted. */
  generate(req: GenerationRequest, signal: AbortSignal): Promise<Completion>;
  /** Throws a ProviderError before the first part; see StreamPart for failures after it. */
  stream(req: GenerationRequest, signal: AbortSignal): AsyncIterable<StreamPart>;
  close(): Promise<void>;
}

export type ProviderErrorKind = 'timeout' | 'upstream' | 'busy' | 'bad-request';

export interface ProviderErrorOptions {
  /** Whether another attempt (same target later, or the next target) may succeed. */
  retryable?: boolean;
  /** Upstream HTTP status, when there was one. */
  status?: number;
  /** Upstream's Retry-After, in milliseconds. */
  retryAfterMs?: number;
  cause?: unknown;
  /**
   * What the caller's tenant may read of the failure, when `message` may not be shown: an upstream's failure
   * names its address and model in `message` (for the server's log), never here. Default: `message`.
   */
  publicMessage?: string;
}

export class ProviderError extends Error {
  readonly kind: ProviderErrorKind;
  readonly retryable: boolean;
  readonly status?: number;
  readonly retryAfterMs?: number;
  /** See ProviderErrorOptions.publicMessage. */
  readonly publicMessage: string;

  constructor(kind: ProviderErrorKind, message: string, options: ProviderErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProviderError';
    this.kind = kind;
    this.publicMessage = options.publicMessage ?? message;
    // Only a malformed request is hopeless everywhere; timeouts, busy engines and upstream faults may pass elsewhere.
    this.retryable = options.retryable ?? kind !== 'bad-request';
    if (options.status !== undefined) this.status = options.status;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
  }
}

/** The error to throw when `signal` fired: its reason, or a standard AbortError. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
