import { type LlamaGrammar, LlamaText, type Token } from 'node-llama-cpp';
import { type GenerationRequest, ProviderError, type ToolDefinition } from '../types.js';
import { toAvailableFunctions, toChatHistory } from './chat-history.js';
import { jsonSchemaToGbnf } from './json-schema-to-gbnf.js';
import type { LocalEngine, StopTriggers } from './local-engine.js';

/** How the engine answers one request, decided before a sequence is taken from the pool. */
export type RequestPlan =
  | {
      mode: 'text';
      promptTokens: Token[];
      stops: StopTriggers;
      /** Set for `response_format` json_object / json_schema. */
      grammar?: LlamaGrammar;
    }
  | {
      mode: 'tool-call';
      /** Prompt up to and including the chat wrapper's call prefix (e.g. `||call: `). */
      promptTokens: Token[];
      /** The call must use one of these tools (one entry = the name is forced, not sampled). */
      tools: ToolDefinition[];
    };

/**
 * Which tools the answer must call, or null for a text answer.
 *
 * tool_choice 'none' → text; 'required' → a call to any tool; `{function: {name}}` → a call to that tool.
 * 'auto' (also the default when tools are given): a call when the last message is the user's, and
 * text when it is a tool result. Small local models cannot be trusted to decide this themselves, and
 * "user asks → call, results arrive → answer" is the usual agent loop.
 */
export function toolsToCall(req: GenerationRequest): ToolDefinition[] | null {
  const tools = req.tools ?? [];
  const choice = req.toolChoice ?? 'auto';
  if (tools.length === 0 || choice === 'none') return null;
  if (typeof choice === 'object') {
    const named = tools.find((tool) => tool.function.name === choice.function.name);
    if (!named) throw new ProviderError('bad-request', `tool_choice names an unknown tool: ${choice.function.name}`);
    return [named];
  }
  if (choice === 'required') return tools;
  return req.messages.at(-1)?.role === 'user' ? tools : null;
}

export async function planRequest(engine: LocalEngine, req: GenerationRequest): Promise<RequestPlan> {
  const callTools = toolsToCall(req);
  const documentTools = req.tools !== undefined && req.tools.length > 0 && req.toolChoice !== 'none';
  const state = engine.chatWrapper.generateContextState({
    chatHistory: toChatHistory(req.messages),
    ...(documentTools && req.tools ? { availableFunctions: toAvailableFunctions(req.tools) } : {}),
  });
  const tokenizer = engine.model.tokenizer;

  if (callTools) {
    const prefix = engine.chatWrapper.settings.functions.call.prefix;
    const promptTokens = LlamaText([state.contextText, prefix]).tokenize(tokenizer);
    assertFits(engine, promptTokens.length);
    return { mode: 'tool-call', promptTokens, tools: callTools };
  }

  const promptTokens = state.contextText.tokenize(tokenizer);
  assertFits(engine, promptTokens.length);
  const grammar = await responseFormatGrammar(engine, req.responseFormat);
  return {
    mode: 'text',
    promptTokens,
    stops: engine.stopTriggers(state.stopGenerationTriggers),
    ...(grammar ? { grammar } : {}),
  };
}

/** The chat wrapper's text between a tool name and its JSON arguments, e.g. `(`. */
export function callParamsPrefixTokens(engine: LocalEngine, toolName: string): Token[] {
  const paramsPrefix = LlamaText(engine.chatWrapper.settings.functions.call.paramsPrefix).mapValues((value) =>
    typeof value === 'string' ? value.replaceAll('{{functionName}}', toolName) : value,
  );
  return paramsPrefix.tokenize(engine.model.tokenizer, 'trimLeadingSpace');
}

function assertFits(engine: LocalEngine, promptTokens: number): void {
  // One token of room is the least an answer needs.
  if (promptTokens >= engine.contextSize) {
    throw new ProviderError(
      'bad-request',
      `prompt is ${promptTokens} tokens; the local model's context holds ${engine.contextSize}`,
    );
  }
}

async function responseFormatGrammar(engine: LocalEngine, format: unknown): Promise<LlamaGrammar | undefined> {
  if (typeof format !== 'object' || format === null || !('type' in format)) return undefined;
  if (format.type === 'json_object') return engine.jsonGrammar();
  if (format.type === 'json_schema' && 'json_schema' in format) {
    const spec = format.json_schema;
    const schema = typeof spec === 'object' && spec !== null && 'schema' in spec ? spec.schema : undefined;
    return schema === undefined ? engine.jsonGrammar() : engine.grammarForSchema(jsonSchemaToGbnf(schema));
  }
  return undefined;
}
