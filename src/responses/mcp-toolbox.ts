import type { Principal } from '../kernel/index.js';
import type { ToolCall, ToolDefinition } from '../providers/index.js';
import { newId } from './input.js';
import type { McpServerSpec } from './mcp-servers.js';
import type { OutputItem } from './types.js';

/** A tool as an MCP server lists it (`mcp_list_tools` item). */
export interface McpToolInfo {
  name: string;
  description: string | null;
  input_schema: Record<string, unknown>;
  annotations: Record<string, unknown> | null;
}

/** One connection to a server for one response (mcp/connector.ts, given by the composition root). */
export interface McpSession {
  listTools(signal: AbortSignal): Promise<McpToolInfo[]>;
  callTool(
    name: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ text: string; isError: boolean }>;
  close(): Promise<void>;
}

export interface McpConnectorPort {
  connect(
    server: { url: string; headers: Record<string, string> },
    caller: { principal: Principal; userId: string | undefined },
    signal: AbortSignal,
  ): Promise<McpSession>;
}

/** Bounds on what a server's listing puts before the model: its descriptions and schemas are untrusted input. */
const MAX_DESCRIPTION_CHARS = 1024;
const MAX_SCHEMA_BYTES = 16 * 1024;
/** What of a call's result reaches the model and the `mcp_call` item. */
const MAX_OUTPUT_CHARS = 64 * 1024;
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

interface Route {
  server: McpServerSpec;
  tool: string;
}

/** Why a connection or a call failed, as the item's `error` says it. */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.length > 1000 ? `${message.slice(0, 1000)}…` : message;
}

/** A description the model reads: printable text, at most MAX_DESCRIPTION_CHARS. */
function boundedDescription(text: string | null): string | undefined {
  if (!text) return undefined;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, ' ').trim();
  return clean.length > MAX_DESCRIPTION_CHARS ? `${clean.slice(0, MAX_DESCRIPTION_CHARS)}…` : clean;
}

function boundedSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const ok = schema && typeof schema === 'object' && Buffer.byteLength(JSON.stringify(schema)) <= MAX_SCHEMA_BYTES;
  return ok ? schema : { type: 'object' };
}

/**
 * The `mcp` tools of one response: each server listed (or its listing taken from the chain), its tools offered to
 * the model as functions, and the calls the model makes of them run on the server (mcp_call items). A server that
 * cannot be reached, refuses, hangs or answers too much is an `mcp_list_tools` item with its `error`; the response
 * goes on without its tools. Connections last the response and are closed with `close`.
 */
export class McpToolbox {
  readonly #connector: McpConnectorPort;
  readonly #caller: { principal: Principal; userId: string | undefined };
  readonly #routes = new Map<string, Route>();
  readonly #sessions = new Map<string, Promise<McpSession>>();
  readonly #functions: ToolDefinition[] = [];

  constructor(connector: McpConnectorPort, caller: { principal: Principal; userId: string | undefined }) {
    this.#connector = connector;
    this.#caller = caller;
  }

  /** The functions the model is offered for the servers' tools. */
  get functions(): readonly ToolDefinition[] {
    return this.#functions;
  }

  /**
   * Lists every server the chain has not listed yet (`listed`, by label) and offers the tools allowed. Returns the
   * `mcp_list_tools` items of the servers listed now. `reserved`: function names already taken by the request.
   */
  async open(
    servers: readonly McpServerSpec[],
    listed: ReadonlyMap<string, McpToolInfo[]>,
    reserved: ReadonlySet<string>,
    signal: AbortSignal,
  ): Promise<OutputItem[]> {
    const items: OutputItem[] = [];
    const taken = new Set(reserved);
    for (const server of servers) {
      let tools = listed.get(server.label);
      if (!tools) {
        const item: OutputItem = { id: newId('mcpl'), type: 'mcp_list_tools', status: 'completed' };
        items.push(item);
        try {
          tools = await (await this.#session(server, signal)).listTools(signal);
          Object.assign(item, { server_label: server.label, tools, error: null });
        } catch (err) {
          if (signal.aborted) throw err;
          Object.assign(item, { status: 'failed', server_label: server.label, tools: [], error: reasonOf(err) });
          continue;
        }
      }
      for (const tool of tools) {
        if (server.allowed && !server.allowed.has(tool.name)) continue;
        const name = [tool.name, `${server.label}__${tool.name}`].find((n) => FUNCTION_NAME.test(n) && !taken.has(n));
        if (!name) continue;
        taken.add(name);
        this.#routes.set(name, { server, tool: tool.name });
        const description = boundedDescription(tool.description);
        this.#functions.push({
          type: 'function',
          function: { name, ...(description ? { description } : {}), parameters: boundedSchema(tool.input_schema) },
        });
      }
    }
    return items;
  }

  /** Whether the function is a server's tool (run by pvai, not the client). */
  owns(functionName: string): boolean {
    return this.#routes.has(functionName);
  }

  needsApproval(functionName: string): boolean {
    const route = this.#routes.get(functionName);
    return route?.server.needsApproval(route.tool) === true;
  }

  /** The call waiting for the client's approval: its id becomes the call's id in the conversation. */
  approvalItem(call: ToolCall, id: string): OutputItem {
    return { id, type: 'mcp_approval_request', status: 'completed', ...this.#named(call) };
  }

  /** A call not run (a limit reached): its `mcp_call` item, `incomplete`, and what the model reads of it. */
  notRun(call: ToolCall, reason: string): { item: OutputItem; text: string } {
    const item = { ...this.#callItem(call, null), status: 'incomplete' as const, output: null, error: reason };
    return { item, text: reason };
  }

  /** Runs the call on its server: the `mcp_call` item and what the model reads of it. */
  async call(
    call: ToolCall,
    approvalRequestId: string | null,
    signal: AbortSignal,
  ): Promise<{ item: OutputItem; text: string }> {
    const route = this.#routes.get(call.function.name);
    const base = this.#callItem(call, approvalRequestId);
    const failed = (error: string) => ({
      item: { ...base, status: 'failed' as const, output: null, error },
      text: `Error: ${error}`,
    });
    if (!route) return failed(`${call.function.name} is not a tool of this request's MCP servers`);
    let args: unknown;
    try {
      args = JSON.parse(call.function.arguments || '{}');
    } catch {
      return failed('the arguments are not JSON');
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args)) {
      return failed('the arguments are not a JSON object');
    }
    try {
      const session = await this.#session(route.server, signal);
      const result = await session.callTool(route.tool, args as Record<string, unknown>, signal);
      const text = result.text.length > MAX_OUTPUT_CHARS ? `${result.text.slice(0, MAX_OUTPUT_CHARS)}…` : result.text;
      if (result.isError) return failed(text || 'the tool reported an error');
      return { item: { ...base, status: 'completed', output: text, error: null }, text };
    } catch (err) {
      if (signal.aborted) throw err;
      return failed(reasonOf(err));
    }
  }

  async close(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(sessions.map((s) => s.then((session) => session.close()).catch(() => undefined)));
  }

  /** The server and tool a call names, and its arguments, as the items show them. */
  #named(call: ToolCall) {
    const route = this.#routes.get(call.function.name);
    return {
      server_label: route?.server.label ?? '',
      name: route?.tool ?? call.function.name,
      arguments: call.function.arguments,
    };
  }

  #callItem(call: ToolCall, approvalRequestId: string | null) {
    return {
      id: newId('mcp'),
      type: 'mcp_call' as const,
      ...this.#named(call),
      approval_request_id: approvalRequestId,
    };
  }

  /** One connection per server per response, made when first needed. */
  #session(server: McpServerSpec, signal: AbortSignal): Promise<McpSession> {
    let session = this.#sessions.get(server.label);
    if (!session) {
      session = this.#connector.connect({ url: server.url, headers: server.headers }, this.#caller, signal);
      this.#sessions.set(server.label, session);
      // A failed connection is not retried within the response, and its rejection is read where it is awaited.
      session.catch(() => undefined);
    }
    return session;
  }
}
