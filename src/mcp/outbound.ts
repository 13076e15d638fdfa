import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type Agent, fetch as undiciFetch } from 'undici';
import { type FetchGuard, pinnedAgent } from '../web/index.js';

/** Why a remote MCP server's answer was not taken (a redirect, a body past the size limit). */
class McpOutboundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'McpOutboundError';
  }
}

/** What one remote server's connection holds open: closed together when the response is done with it. */
export interface OutboundConnections {
  fetch: FetchLike;
  close(): Promise<void>;
}

/**
 * The SDK transport's `fetch` for one remote MCP server. Every request's URL goes through the guard (the web
 * fetcher's SSRF policy: public addresses, private ones only as the operator allows) and is sent on a connection
 * pinned to the address the guard checked, so no second DNS answer can move it. Redirects are not followed (an
 * MCP endpoint does not move, and a redirect would take the request, and its `headers`, to a URL the caller never
 * named). Each answer's body is cut at `maxBytes`: past it the read fails, and the call with it.
 */
export function outboundConnections(guard: FetchGuard, maxBytes: number): OutboundConnections {
  const agents = new Set<Agent>();
  const fetch: FetchLike = async (url, init) => {
    const signal = init?.signal ?? undefined;
    const target = await guard.check(String(url), undefined, signal);
    const agent = pinnedAgent(target, undefined);
    agents.add(agent);
    const response = await undiciFetch(target.url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      redirect: 'manual',
      dispatcher: agent,
    });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      throw new McpOutboundError(`the server answered ${response.status}, a redirect, which is not followed`);
    }
    if (!response.body) return response as unknown as Response;
    let seen = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) {
            controller.error(new McpOutboundError(`the server's answer passed ${maxBytes} bytes`));
          } else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted as ReadableStream<Uint8Array<ArrayBuffer>>, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers as unknown as Headers,
    });
  };
  return {
    fetch,
    async close() {
      await Promise.all([...agents].map((agent) => agent.destroy().catch(() => undefined)));
      agents.clear();
    },
  };
}
