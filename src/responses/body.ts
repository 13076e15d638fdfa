import { DEFAULT_TEMPERATURE } from '../chat/index.js';
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

export interface BodyFields {
  id: string;
  createdAt: number;
  completedAt: number | null;
  request: ResponseCreateBody;
  userId: string;
  output: OutputItem[];
  /** Where the response is: started, ended by its last call's finish, or failed after it started. */
  state: 'in_progress' | FinishReason | AppError;
  totals: Totals | undefined;
  memoryContext: ResponseBody['memory_context'];
}

/**
 * The `response` object: its status (`completed`; `incomplete` with the reason when the answer hit
 * `max_output_tokens` or a content filter; `failed` with the error), its output, its usage, and the request's
 * settings echoed as OpenAI returns them (defaults filled in).
 */
export function responseBody(f: BodyFields): ResponseBody {
  const r = f.request;
  const failed = typeof f.state === 'object' ? f.state : undefined;
  const incomplete =
    f.state === 'length' ? 'max_output_tokens' : f.state === 'content_filter' ? 'content_filter' : undefined;
  const status = failed
    ? 'failed'
    : f.state === 'in_progress'
      ? 'in_progress'
      : incomplete
        ? 'incomplete'
        : 'completed';
  return {
    id: f.id,
    object: 'response',
    created_at: f.createdAt,
    completed_at: f.completedAt,
    status,
    // OpenAI's form of the code, as in the `error` object of every error body (`upstream_error`).
    error: failed ? { code: failed.code.toLowerCase(), message: failed.message } : null,
    incomplete_details: incomplete ? { reason: incomplete } : null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    max_tool_calls: r.max_tool_calls ?? null,
    model: r.model,
    output: f.output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    store: r.store !== false,
    temperature: r.temperature ?? DEFAULT_TEMPERATURE,
    top_p: r.top_p ?? 1,
    tool_choice: r.tool_choice ?? 'auto',
    tools: r.tools ?? [],
    text: { format: r.text?.format ?? { type: 'text' } },
    truncation: 'disabled',
    reasoning: { effort: null, summary: null },
    background: false,
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
    metadata: r.metadata ?? {},
    memory_context: f.memoryContext,
  };
}
