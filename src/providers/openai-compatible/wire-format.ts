import { newToolCallId } from '../completion-collector.js';
import { contentText, imageTokens } from '../content.js';
import type { FinishReason, GenerationRequest, StreamPart, ToolCall, Usage } from '../types.js';

/**
 * The chat-completions request body sent upstream. Optional fields are assigned, not spread from conditional
 * literals: eight spreads cost ~60 ns and an object each per request, assignments ~15 ns (same key order).
 */
export function buildRequestBody(req: GenerationRequest, model: string, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model,
    // As given: a vision route's image parts go up exactly as the client sent them.
    messages: req.messages,
    // `max_tokens` (not `max_completion_tokens`): the one every OpenAI-compatible server understands.
    max_tokens: req.maxTokens,
    temperature: req.temperature,
  };
  if (req.topP !== undefined) body.top_p = req.topP;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.presencePenalty !== undefined) body.presence_penalty = req.presencePenalty;
  if (req.frequencyPenalty !== undefined) body.frequency_penalty = req.frequencyPenalty;
  if (req.stop !== undefined && req.stop.length > 0) body.stop = req.stop;
  const tools = req.tools !== undefined && req.tools.length > 0;
  if (tools) body.tools = req.tools;
  if (tools && req.toolChoice !== undefined) body.tool_choice = req.toolChoice;
  if (req.responseFormat !== undefined) body.response_format = req.responseFormat;
  body.stream = stream;
  if (stream) body.stream_options = { include_usage: true };
  return body;
}

type JsonRecord = Record<string, unknown>;

function asRecord(value: unknown): JsonRecord | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRecord) : undefined;
}

function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Arguments should be a JSON string; some servers send the object itself. */
function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

function mapFinishReason(raw: unknown): FinishReason | undefined {
  switch (raw) {
    case 'stop':
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return raw;
    case 'function_call':
      return 'tool_calls';
    case null:
    case undefined:
      return undefined;
    default:
      return 'stop'; // e.g. 'eos' from some servers
  }
}

function parseUsage(raw: unknown): Usage | undefined {
  const usage = asRecord(raw);
  if (!usage) return undefined;
  const prompt = usage.prompt_tokens;
  const completion = usage.completion_tokens;
  if (typeof prompt !== 'number' || typeof completion !== 'number') return undefined;
  return { promptTokens: prompt, completionTokens: completion };
}

/** `{"error": {...}}` bodies (in responses and, from some servers, inside a stream). */
export function upstreamErrorMessage(raw: unknown): string | undefined {
  const body = asRecord(raw);
  if (!body || body.error === undefined) return undefined;
  const error = asRecord(body.error);
  return asString(error?.message) ?? asString(body.error) ?? 'upstream reported an error';
}

/** The `param` and `code` of an `{"error": {...}}` body, when they are text. */
export function upstreamErrorFields(raw: unknown): { param?: string; code?: string } {
  const error = asRecord(asRecord(raw)?.error);
  const param = asString(error?.param);
  const code = asString(error?.code);
  return { ...(param !== undefined ? { param } : {}), ...(code !== undefined ? { code } : {}) };
}

export interface ParsedCompletion {
  text: string | null;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
  usage: Usage | undefined;
}

export function parseCompletion(raw: unknown): ParsedCompletion | undefined {
  const body = asRecord(raw);
  const choices = body?.choices;
  const choice = Array.isArray(choices) ? asRecord(choices[0]) : undefined;
  const message = asRecord(choice?.message);
  if (!body || !message) return undefined;
  const toolCalls: ToolCall[] = [];
  if (Array.isArray(message.tool_calls)) {
    for (const entry of message.tool_calls) {
      const call = asRecord(entry);
      const fn = asRecord(call?.function);
      const name = asString(fn?.name);
      if (!call || !name) continue;
      // Some servers (older Ollama and llama.cpp builds) omit ids; clients need one to answer the call.
      toolCalls.push({
        id: asString(call.id) || newToolCallId(),
        type: 'function',
        function: { name, arguments: argumentsText(fn?.arguments) },
      });
    }
  }
  const legacyCall = asRecord(message.function_call);
  const legacyName = asString(legacyCall?.name);
  if (legacyName)
    toolCalls.push({
      id: newToolCallId(),
      type: 'function',
      function: { name: legacyName, arguments: argumentsText(legacyCall?.arguments) },
    });
  return {
    text: asString(message.content) ?? null,
    toolCalls,
    finishReason: mapFinishReason(choice?.finish_reason) ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    usage: parseUsage(body.usage),
  };
}

export interface ParsedChunk {
  parts: StreamPart[];
  finishReason: FinishReason | undefined;
  usage: Usage | undefined;
}

/** One `chat.completion.chunk` → our parts (only choice 0 is read: we never ask for n > 1). */
export function parseChunk(raw: unknown): ParsedChunk {
  const body = asRecord(raw);
  const choices = body?.choices;
  const choice = Array.isArray(choices) ? asRecord(choices[0]) : undefined;
  const delta = asRecord(choice?.delta);
  const parts: StreamPart[] = [];
  const content = asString(delta?.content);
  if (content) parts.push({ type: 'text-delta', text: content });
  if (Array.isArray(delta?.tool_calls)) {
    for (const entry of delta.tool_calls) {
      const call = asRecord(entry);
      if (!call) continue;
      const fn = asRecord(call.function);
      const id = asString(call.id);
      const name = asString(fn?.name);
      parts.push({
        type: 'tool-call-delta',
        index: typeof call.index === 'number' ? call.index : 0,
        ...(id ? { id } : {}),
        ...(name ? { name } : {}),
        argumentsDelta: argumentsText(fn?.arguments),
      });
    }
  }
  const legacyCall = asRecord(delta?.function_call);
  if (legacyCall) {
    const name = asString(legacyCall.name);
    parts.push({
      type: 'tool-call-delta',
      index: 0,
      ...(name ? { name } : {}),
      argumentsDelta: argumentsText(legacyCall.arguments),
    });
  }
  return { parts, finishReason: mapFinishReason(choice?.finish_reason), usage: parseUsage(body?.usage) };
}

/**
 * Fallback token counts for upstreams that report no usage: about 4 characters per token (OpenAI's
 * rule of thumb for English), plus 4 tokens of chat framing per message, and an image as `imageTokens`
 * estimates it (never its URL's characters). Approximate by design.
 */
export function estimateUsage(req: GenerationRequest, completionChars: number): Usage {
  let promptChars = 0;
  let images = 0;
  for (const message of req.messages) {
    promptChars += contentText(message.content).length + (message.name?.length ?? 0);
    images += imageTokens(message.content);
    for (const call of message.tool_calls ?? [])
      promptChars += call.function.name.length + call.function.arguments.length;
  }
  return {
    promptTokens: Math.ceil(promptChars / 4) + 4 * req.messages.length + images,
    completionTokens: Math.ceil(completionChars / 4),
  };
}
