import type { AppError } from '../errors/index.js';
import type { FinishReason } from '../providers/index.js';
import type { OutputItem, ResponseBody, ResponseCreateBody } from './types.js';

/** Tokens of one response, over all its model calls. */
export interface Totals {
  input: number;
  output: number;
  /** Input tokens of calls answered from the response cache. */
  cached: number;
}

/**
 * Where a response is: waiting on the queue (background), started, ended by its last call's finish, cancelled,
 * or failed.
 */
export type ResponseState = 'queued' | 'in_progress' | 'cancelled' | FinishReason | AppError;

export interface BodyFields {
  id: string;
  createdAt: number;
  completedAt: number | null;
  request: ResponseCreateBody;
  userId: string;
  /** The conversation the response was made in, when the request named one. */
  conversationId: string | null;
  /** The answer limit applied: the request's, else the route's default. */
  maxOutputTokens: number;
  /** The temperature applied: the request's, else the route's, else the contract's. */
  temperature: number;
  output: OutputItem[];
  state: ResponseState;
  totals: Totals | undefined;
  memoryContext: ResponseBody['memory_context'];
}

type Tool = ResponseBody['tools'][number];

/**
 * A tool as echoed: a function tool with every field of Open Responses' FunctionTool (`description` and
 * `parameters` null when absent; `strict` true when absent, since the local engine holds a call's arguments to
 * `parameters` by grammar); the built-in tools as sent.
 */
function echoedTool(tool: Tool): Tool {
  if (tool.type !== 'function') return tool;
  return {
    ...tool,
    description: tool.description ?? null,
    parameters: tool.parameters ?? null,
    strict: tool.strict ?? true,
  };
}

function statusOf(state: ResponseState): ResponseBody['status'] {
  if (typeof state === 'object') return 'failed';
  if (state === 'queued' || state === 'in_progress' || state === 'cancelled') return state;
  return state === 'length' || state === 'content_filter' ? 'incomplete' : 'completed';
}

/**
 * The `response` object, the one builder of it (the JSON answer, the stored one, the export and every event
 * that carries it): its status (`completed`; `incomplete` with the reason when the answer hit the output limit
 * or a content filter; `failed` with the error; `queued`, `in_progress` and `cancelled` for a background
 * response), its output, its usage, and every setting of the request echoed as applied (defaults filled in).
 */
export function responseBody(f: BodyFields): ResponseBody {
  const r = f.request;
  const failed = typeof f.state === 'object' ? f.state : undefined;
  const incomplete =
    f.state === 'length' ? 'max_output_tokens' : f.state === 'content_filter' ? 'content_filter' : undefined;
  return {
    id: f.id,
    object: 'response',
    created_at: f.createdAt,
    completed_at: f.completedAt,
    status: statusOf(f.state),
    // OpenAI's form of the code, as in the `error` object of every error body (`upstream_error`).
    error: failed ? { code: failed.code.toLowerCase(), message: failed.message } : null,
    incomplete_details: incomplete ? { reason: incomplete } : null,
    instructions: r.instructions ?? null,
    max_output_tokens: f.maxOutputTokens,
    max_tool_calls: r.max_tool_calls ?? null,
    model: r.model,
    output: f.output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    conversation: f.conversationId === null ? null : { id: f.conversationId },
    store: r.store !== false,
    background: r.background === true,
    temperature: f.temperature,
    top_p: r.top_p ?? 1,
    presence_penalty: r.presence_penalty ?? 0,
    frequency_penalty: r.frequency_penalty ?? 0,
    top_logprobs: r.top_logprobs ?? 0,
    tool_choice: r.tool_choice ?? 'auto',
    tools: (r.tools ?? []).map(echoedTool),
    text: { format: r.text?.format ?? { type: 'text' } },
    truncation: 'disabled',
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    usage: f.totals
      ? {
          input_tokens: f.totals.input,
          input_tokens_details: { cached_tokens: f.totals.cached },
          output_tokens: f.totals.output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: f.totals.input + f.totals.output,
        }
      : null,
    user: r.user ?? null,
    user_id: f.userId,
    safety_identifier: r.safety_identifier ?? null,
    prompt_cache_key: r.prompt_cache_key ?? null,
    metadata: r.metadata ?? {},
    memory_context: f.memoryContext,
  };
}
