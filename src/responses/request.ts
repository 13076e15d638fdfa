import { type ChatCompletionRequest, DEFAULT_TEMPERATURE } from '../chat/index.js';
import { AppError } from '../errors/index.js';
import { readAttributeFilter } from '../kernel/index.js';
import type { ChatMessage, ToolDefinition } from '../providers/index.js';
import { CODE_TOOL, CODE_TOOL_NAME } from './code-interpreter.js';
import { type McpServerSpec, readMcpTool } from './mcp-servers.js';
import type { ResponseCreateBody } from './types.js';

/** `file_search`'s `max_num_results` when the request names none: the chat's default `rag_k`. */
const DEFAULT_FILE_SEARCH_RESULTS = 5;
/** `file_search.vector_store_ids`: as many stores as chat's `vector_store_ids` may name. */
const MAX_VECTOR_STORES = 10;
/** Pages a `web_search` reads by `search_context_size` (the web step's limit caps them). */
const PAGES_BY_CONTEXT_SIZE = { low: 2, medium: 3, high: 5 } as const;
/** Built-in tool calls (code runs) at most before the answer, when `max_tool_calls` says nothing. */
const DEFAULT_MAX_TOOL_CALLS = 4;

export interface BuiltInTools {
  fileSearch?: { k: number; vectorStoreIds?: string[] };
  /** `domains`: only results on these domains (and their subdomains) are read and cited. */
  webSearch?: { pages: number; domains?: string[] };
  codeInterpreter?: true;
}

/** A request read into what the chat pipeline runs, and what the response reports. */
export interface ResponsePlan {
  /** The first round's chat request (messages: instructions, the conversation so far, the new input). */
  chat: ChatCompletionRequest;
  /** The same without the instructions: what is stored as the conversation this response continues. */
  conversation: ChatMessage[];
  builtIns: BuiltInTools;
  /** The `mcp` tools' servers: listed, and their tools added to the chat's, when the response starts. */
  mcp: McpServerSpec[];
  /** `tool_choice` names `code_interpreter`: the first round must call it. */
  forceCode: boolean;
  maxToolCalls: number;
  include: Set<string>;
}

function bad(field: string, reason: string, message = `${field} ${reason}`): AppError {
  return new AppError('INVALID_PARAMETER', message, { field, reason });
}

type Tool = NonNullable<ResponseCreateBody['tools']>[number];

/** The request's tools: function tools for the model, built-ins as settings; any other type refused. */
function readTools(tools: readonly Tool[]): {
  functions: ToolDefinition[];
  builtIns: BuiltInTools;
  mcp: McpServerSpec[];
  filter?: unknown;
  minScore?: number;
} {
  const functions: ToolDefinition[] = [];
  const builtIns: BuiltInTools = {};
  const mcp: McpServerSpec[] = [];
  let filter: unknown;
  let minScore: number | undefined;
  tools.forEach((tool, i) => {
    const field = `tools[${i}]`;
    switch (tool.type) {
      case 'function': {
        if (!tool.name) throw bad(`${field}.name`, 'is required');
        if (tool.name === CODE_TOOL_NAME && tools.some((t) => t.type === 'code_interpreter')) {
          throw bad(`${field}.name`, `is the name the code_interpreter tool takes; give the function another name`);
        }
        functions.push({
          type: 'function',
          function: {
            name: tool.name,
            ...(tool.description ? { description: tool.description } : {}),
            ...(tool.parameters ? { parameters: tool.parameters } : {}),
            ...(typeof tool.strict === 'boolean' ? { strict: tool.strict } : {}),
          },
        });
        return;
      }
      case 'file_search': {
        const stores = tool.vector_store_ids ?? [];
        if (stores.length > MAX_VECTOR_STORES) {
          throw bad(`${field}.vector_store_ids`, `must name at most ${MAX_VECTOR_STORES} vector stores`);
        }
        builtIns.fileSearch = {
          k: tool.max_num_results ?? DEFAULT_FILE_SEARCH_RESULTS,
          ...(stores.length > 0 ? { vectorStoreIds: stores } : {}),
        };
        if (tool.filters) {
          const read = readAttributeFilter(tool.filters, `${field}.filters`);
          if ('reason' in read) throw bad(read.field, read.reason);
          filter = read.filter;
        }
        minScore = tool.ranking_options?.score_threshold;
        return;
      }
      case 'web_search':
      case 'web_search_preview':
      case 'web_search_preview_2025_03_11':
      case 'web_search_2025_08_26': {
        const domains = (tool as { filters?: { allowed_domains?: unknown } }).filters?.allowed_domains;
        if (
          domains !== undefined &&
          domains !== null &&
          (!Array.isArray(domains) || !domains.every((d) => typeof d === 'string'))
        ) {
          throw bad(`${field}.filters.allowed_domains`, 'must be a list of domain names');
        }
        builtIns.webSearch = {
          pages: PAGES_BY_CONTEXT_SIZE[tool.search_context_size ?? 'medium'],
          ...(Array.isArray(domains) && domains.length > 0 ? { domains: domains as string[] } : {}),
        };
        return;
      }
      case 'code_interpreter':
        builtIns.codeInterpreter = true;
        return;
      case 'mcp':
        mcp.push(readMcpTool(tool, field, new Set(mcp.map((m) => m.label))));
        return;
      default:
        throw bad(
          `${field}.type`,
          'must be function, file_search, web_search (web_search_preview), code_interpreter or mcp',
          `${field}.type ${tool.type} is not a tool pvai runs: function, file_search, web_search, code_interpreter and mcp are`,
        );
    }
  });
  return {
    functions,
    builtIns,
    mcp,
    ...(filter ? { filter } : {}),
    ...(minScore !== undefined ? { minScore } : {}),
  };
}

/** `text.format` as chat's `response_format`. */
function responseFormat(body: ResponseCreateBody): ChatCompletionRequest['response_format'] {
  const format = body.text?.format;
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (!format.schema) throw bad('text.format.schema', 'is required for json_schema');
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name ?? 'response',
      schema: format.schema,
      ...(format.strict !== undefined && format.strict !== null ? { strict: format.strict } : {}),
    },
  };
}

/**
 * The Responses body → the chat pipeline's request. `history` is the conversation of `previous_response_id`
 * (already the same end user's), `input` the new turns as messages.
 */
export function planResponse(
  body: ResponseCreateBody,
  userId: string,
  history: readonly ChatMessage[],
  input: readonly ChatMessage[],
  temperature: number = DEFAULT_TEMPERATURE,
): ResponsePlan {
  if (body.include?.includes('message.output_text.logprobs')) {
    throw bad('include', 'cannot ask for message.output_text.logprobs: log-probabilities are not returned');
  }
  const { functions, builtIns, mcp, filter, minScore } = readTools(body.tools ?? []);
  const choice = body.tool_choice;
  // A call the model must make, with no tool at all: refused as OpenAI does, not answered in text.
  if ((choice === 'required' || (typeof choice === 'object' && choice !== null)) && (body.tools ?? []).length === 0) {
    throw bad(
      'tool_choice',
      'needs tools',
      `tool_choice ${typeof choice === 'string' ? choice : choice.type} needs tools`,
    );
  }
  let toolChoice: ChatCompletionRequest['tool_choice'];
  let forceCode = false;
  if (typeof choice === 'string') {
    if (choice === 'none') {
      // No tool of any kind: the built-in searches do not run either.
      delete builtIns.fileSearch;
      delete builtIns.webSearch;
      delete builtIns.codeInterpreter;
      mcp.length = 0;
    }
    toolChoice = functions.length > 0 || builtIns.codeInterpreter || mcp.length > 0 ? choice : undefined;
  } else if (choice) {
    const named = choice.type === 'function' ? choice.name : undefined;
    if (choice.type === 'function' && named === undefined) {
      throw bad('tool_choice.name', 'is required when tool_choice.type is function');
    }
    if (named !== undefined) {
      if (!functions.some((f) => f.function.name === named)) {
        throw bad(
          'tool_choice.name',
          'must name one of the functions in tools',
          `tool_choice names the function ${named}, which is not in tools`,
        );
      }
      toolChoice = { type: 'function', function: { name: named } };
    } else if (choice.type === 'code_interpreter') {
      if (!builtIns.codeInterpreter) throw bad('tool_choice.type', 'names code_interpreter, which is not in tools');
      forceCode = true;
    } else if (choice.type === 'file_search' || choice.type.startsWith('web_search')) {
      const present = choice.type === 'file_search' ? builtIns.fileSearch : builtIns.webSearch;
      if (!present) throw bad('tool_choice.type', `names ${choice.type}, which is not in tools`);
    } else {
      throw bad('tool_choice.type', 'must be function, file_search, web_search or code_interpreter');
    }
  }
  const chatTools = [...functions, ...(builtIns.codeInterpreter ? [CODE_TOOL] : [])];
  const conversation = [...history, ...input];
  const system: ChatMessage[] = body.instructions ? [{ role: 'system', content: body.instructions }] : [];
  const format = responseFormat(body);
  const chat: ChatCompletionRequest = {
    model: body.model,
    user_id: userId,
    messages: [...system, ...conversation],
    temperature,
    ...(body.top_p !== undefined && body.top_p !== null ? { top_p: body.top_p } : {}),
    ...(body.presence_penalty !== undefined && body.presence_penalty !== null
      ? { presence_penalty: body.presence_penalty }
      : {}),
    ...(body.frequency_penalty !== undefined && body.frequency_penalty !== null
      ? { frequency_penalty: body.frequency_penalty }
      : {}),
    ...(body.max_output_tokens !== undefined && body.max_output_tokens !== null
      ? { max_tokens: body.max_output_tokens }
      : {}),
    ...(body.skip_cache !== undefined ? { skip_cache: body.skip_cache } : {}),
    ...(body.use_memory !== undefined ? { use_memory: body.use_memory } : {}),
    ...(chatTools.length > 0 ? { tools: chatTools } : {}),
    ...(toolChoice !== undefined ? { tool_choice: toolChoice } : {}),
    ...(format ? { response_format: format } : {}),
    ...(builtIns.fileSearch
      ? {
          use_rag: true,
          rag_k: builtIns.fileSearch.k,
          ...(builtIns.fileSearch.vectorStoreIds ? { vector_store_ids: builtIns.fileSearch.vectorStoreIds } : {}),
          ...(filter ? { rag_filter: filter as ChatCompletionRequest['rag_filter'] } : {}),
          ...(minScore !== undefined ? { rag_min_score: minScore } : {}),
        }
      : {}),
    ...(builtIns.webSearch
      ? {
          use_web_search: true,
          web_pages: builtIns.webSearch.pages,
          ...(builtIns.webSearch.domains ? { web_domains: builtIns.webSearch.domains } : {}),
        }
      : {}),
    // Input without a user turn (a function's output) gives memory nothing new to learn.
    ...(input.some((m) => m.role === 'user') ? {} : { learn: false }),
  };
  return {
    chat,
    conversation,
    builtIns,
    mcp,
    forceCode,
    maxToolCalls: body.max_tool_calls ?? DEFAULT_MAX_TOOL_CALLS,
    include: new Set(body.include ?? []),
  };
}
