import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

type Id = string | number;

/**
 * The SDK's `Transport` for one HTTP exchange of the stateless Streamable HTTP transport: the message the POST
 * carried goes to the server, and the server's answer to it (a request's response) comes back as the POST's body.
 * The protocol — negotiation, method dispatch, schemas, JSON-RPC errors — is the SDK's `McpServer`; this only
 * carries one message in and its reply out, where the SDK's own HTTP transports would write to a socket.
 */
export class OneExchange implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #waiting = new Map<Id, (reply: JSONRPCMessage) => void>();

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    // Only responses to the client's request are carried back; a server-to-client request (sampling,
    // elicitation) has no stream to go on in a stateless exchange, and the server offers none.
    if (!('id' in message) || !('result' in message || 'error' in message)) return;
    const id = message.id as Id;
    this.#waiting.get(id)?.(message);
    this.#waiting.delete(id);
  }

  async close(): Promise<void> {
    this.onclose?.();
  }

  /** Hands a request to the server; resolves with its response (the SDK answers every request it is given). */
  exchange(request: JSONRPCRequest): Promise<JSONRPCMessage> {
    const reply = new Promise<JSONRPCMessage>((resolve) => this.#waiting.set(request.id, resolve));
    this.onmessage?.(request);
    return reply;
  }

  /** Hands a notification or a response to the server: nothing comes back. */
  deliver(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }
}
