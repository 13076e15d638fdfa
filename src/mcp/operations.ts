import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';
import { AppError } from '../errors/index.js';
import { endUserOf, type Operations, requirePrincipal } from '../http/index.js';
import { type CreditRefund, type CreditsPort, type Principal, payerOf } from '../kernel/index.js';
import { OneExchange } from './one-exchange.js';
import { registerDocumentResources } from './resources.js';
import { registerTools, type ToolCaller, type ToolPorts } from './tools.js';

/** The name and version pvai's MCP server reports in `initialize`. */
const SERVER_INFO = { name: 'pvai', version: '2.0.0' };
/** What one `tools/call` costs (docs/mcp.md); `initialize`, `tools/list` and notifications cost nothing. */
const TOOL_CALL_CREDITS = 1;

export interface McpOperationDeps {
  portsFor(principal: Principal): ToolPorts;
  credits: CreditsPort;
}

/** pvai's MCP server for one caller: its tools and the end user's documents as resources. */
export function ownServer(ports: ToolPorts, caller: ToolCaller): McpServer {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {}, resources: {} } });
  registerTools(server, ports, caller);
  registerDocumentResources(server, ports, caller);
  return server;
}

/** Whether the answer says the call failed (a JSON-RPC error, or a tool's error result): then it costs nothing. */
function failed(reply: JSONRPCMessage): boolean {
  if ('error' in reply) return true;
  const result = (reply as { result?: { isError?: unknown } }).result;
  return result?.isError === true;
}

/**
 * POST /z1/mcp: one JSON-RPC message through a fresh `McpServer` (stateless Streamable HTTP: nothing is kept
 * between POSTs, so any replica answers any of them). The request's end user is the key's bound one, else
 * `X-PV-User` (a bound key refuses another, as everywhere). A tool call is paid before it runs and refunded when
 * it fails, as a chat completion is.
 */
export function mcpOperations(deps: McpOperationDeps): Operations<'mcpMessage'> {
  return {
    mcpMessage: async ({ body, headers }, call) => {
      const principal = requirePrincipal(call);
      const version = headers['mcp-protocol-version'];
      if (version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        throw new AppError('INVALID_PARAMETER', `MCP protocol version ${version} is not supported`, {
          field: 'mcp-protocol-version',
          reason: `must be one of ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
        });
      }
      const named = headers['x-pv-user'];
      // A key bound to an end user refuses another (403), as every operation does.
      const userId =
        named !== undefined ? endUserOf(principal, named, 'x-pv-user') : (principal.key.userId ?? undefined);
      if (userId !== undefined) call.usage.userId = userId;

      const message = body as JSONRPCMessage;
      // One kind of message at a time: a request (answered), a notification or a response (taken). A message that
      // is two at once (a method and a result) is none the SDK would answer.
      const request = isJSONRPCRequest(message);
      if (
        !request &&
        !isJSONRPCNotification(message) &&
        !isJSONRPCResultResponse(message) &&
        !isJSONRPCErrorResponse(message)
      ) {
        throw new AppError('INVALID_PARAMETER', 'The body is no JSON-RPC request, notification or response', {
          field: 'body',
          reason: 'a request has id and method, a notification method alone, a response id and result or error',
        });
      }
      const price = request && message.method === 'tools/call' ? TOOL_CALL_CREDITS : 0;
      let refund: CreditRefund | undefined;
      if (price > 0) {
        const charge = await deps.credits.charge(payerOf(principal), price);
        if (charge.ok) refund = charge.refund;
        else {
          throw new AppError(
            'INSUFFICIENT_CREDITS',
            `A tool call costs ${price} credit; the balance is ${charge.balance}`,
            {
              required: price,
              balance: charge.balance,
            },
          );
        }
      }
      const server = ownServer(deps.portsFor(principal), { principal, userId });
      const transport = new OneExchange();
      let charged = price;
      try {
        await server.connect(transport);
        if (!request) {
          transport.deliver(message);
          return { status: 202, headers: { 'X-Credits-Charged': '0' } };
        }
        const reply = await transport.exchange(message);
        if (refund && charged > 0 && failed(reply)) {
          await deps.credits.refund(refund);
          charged = 0;
        }
        call.usage.credits = charged;
        return { status: 200, headers: { 'X-Credits-Charged': String(charged) }, body: reply as typeof body };
      } catch (err) {
        if (refund && charged > 0) await deps.credits.refund(refund);
        throw err;
      } finally {
        await server.close();
      }
    },
  };
}
