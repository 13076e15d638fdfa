import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { McpSession, McpToolInfo } from '../responses/index.js';
import { TRACING, withTraceContext } from '../tracing/index.js';
import type { FetchGuard } from '../web/index.js';
import { type OutboundConnections, outboundConnections } from './outbound.js';
import type { ToolCaller } from './tools.js';

/** The `server_url` that names pvai's own tools: served in process, no network hop, no credential. */
const OWN_SERVER_URL = 'pvai';
/** Tools read of one server at most (pages of `tools/list` stop there). */
const MAX_TOOLS = 128;

export interface RemoteMcpLimits {
  listTimeoutMs: number;
  callTimeoutMs: number;
  maxResponseBytes: number;
}

/** What the model reads of a tool's result: its text parts, other parts named, else its structured content. */
function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((part) => {
    if (part.type === 'text') return part.text;
    if (part.type === 'resource')
      return 'text' in part.resource ? part.resource.text : `[resource ${part.resource.uri}]`;
    if (part.type === 'resource_link') return `[resource ${part.uri}]`;
    return `[${part.type} ${'mimeType' in part ? part.mimeType : ''}]`.replace(' ]', ']');
  });
  if (parts.length === 0 && result.structuredContent) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

export interface ConnectorDeps {
  guard: FetchGuard;
  limits: RemoteMcpLimits;
  /** pvai's own MCP server for the caller (the tools of /z1/mcp). */
  ownServer(caller: ToolCaller): McpServer;
}

/**
 * Connects the Responses API's `mcp` tools to their servers with the official SDK's client: Streamable HTTP through
 * the outbound policy (outbound.ts) for a remote server, an in-memory pair for `server_url: "pvai"`. Only the
 * request's own `headers` go to a remote server; nothing of the caller's credentials does.
 */
export function mcpConnector(deps: ConnectorDeps) {
  const { limits } = deps;
  return {
    async connect(
      server: { url: string; headers: Record<string, string> },
      caller: ToolCaller,
      signal: AbortSignal,
    ): Promise<McpSession> {
      const client = new Client({ name: 'pvai', version: '2.0.0' });
      let connections: OutboundConnections | undefined;
      let own: McpServer | undefined;
      let transport: Transport;
      if (server.url === OWN_SERVER_URL) {
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        own = deps.ownServer(caller);
        await own.connect(serverSide);
        transport = clientSide;
      } else {
        connections = outboundConnections(deps.guard, limits.maxResponseBytes);
        transport = new StreamableHTTPClientTransport(new URL(server.url), {
          fetch: TRACING.on ? withTraceContext(connections.fetch) : connections.fetch,
          requestInit: { headers: server.headers },
        });
      }
      const close = async () => {
        await client.close().catch(() => undefined);
        await own?.close().catch(() => undefined);
        await connections?.close();
      };
      try {
        await client.connect(transport, { signal, timeout: limits.listTimeoutMs });
      } catch (err) {
        await close();
        throw err;
      }
      return {
        async listTools(listing) {
          const tools: McpToolInfo[] = [];
          let cursor: string | undefined;
          do {
            const page = await client.listTools(cursor ? { cursor } : undefined, {
              signal: listing,
              timeout: limits.listTimeoutMs,
            });
            for (const tool of page.tools) {
              tools.push({
                name: tool.name,
                description: tool.description ?? null,
                input_schema: tool.inputSchema as Record<string, unknown>,
                annotations: (tool.annotations as Record<string, unknown> | undefined) ?? null,
              });
            }
            cursor = page.nextCursor;
          } while (cursor && tools.length < MAX_TOOLS);
          return tools.slice(0, MAX_TOOLS);
        },
        async callTool(name, args, calling) {
          const result = (await client.callTool({ name, arguments: args }, undefined, {
            signal: calling,
            timeout: limits.callTimeoutMs,
          })) as CallToolResult;
          return { text: resultText(result), isError: result.isError === true };
        },
        close,
      };
    },
  };
}
