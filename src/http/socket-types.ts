import type { Logger } from 'pino';
import type { Principal } from '../kernel/index.js';
import type { OperationId, RequestBody } from './operation.js';
import type { Call } from './types.js';

/**
 * A WebSocket route (HttpPorts.upgrades): `GET path` with `Upgrade: websocket`. The HTTP layer checks the
 * handshake and the key as for any request (upgrade.ts), then keeps the socket's transport (socket-session.ts):
 * its messages one at a time, each a request of `operationId` (admitted, recorded), its backpressure, its idle
 * deadline and its part in the graceful stop. The route only answers the messages.
 */
export interface UpgradeRoute<Id extends OperationId = OperationId> {
  path: string;
  operationId: Id;
  /** A socket opened on the route: the handler of its messages, for as long as it is open. */
  open(socket: SocketSession): SocketHandler<Id>;
}

/** An open socket as its route sees it. */
export interface SocketSession {
  readonly principal: Principal;
  readonly log: Logger;
  /**
   * Sends a text message. Returns a promise when the socket's buffer is full: it resolves once the socket
   * can take more; a socket whose client stopped reading for `streamWriteTimeoutMs` is cut. Throws (or
   * rejects with) ClientDisconnectedError once the socket is closed.
   */
  send(text: string): Promise<void> | void;
}

export interface SocketHandler<Id extends OperationId = OperationId> {
  /**
   * One message, parsed JSON within the limits of a request body and admitted against the account's rate
   * limits: a request of the route's operation. Its answer goes out through `send`; a thrown AppError is sent
   * as the error message `{type: 'error', status, error}` (OpenAI's error object) and the socket stays open.
   * The next message waits until this one settles. Its usage row is recorded then, from `call.usage`.
   */
  message(json: unknown, call: MessageCall<Id>): Promise<void>;
}

/** A message's request: the handler's Call (its disconnect signal follows the socket and the server's stop). */
export interface MessageCall<Id extends OperationId = OperationId> extends Call {
  /** `json` as the operation's request body, validated as an HTTP request's is (the same 400, naming the field). */
  body(json: unknown): RequestBody<Id>;
}

/** What the graceful stop holds of an open socket. */
export interface HeldSocket {
  /** Closes the socket once the message in hand is answered (at once when none is). */
  drain(): void;
  /** Closes the socket now. */
  terminate(): void;
}

/** Told of every socket the upgrade routes hold (the graceful stop drains them): a ticket, given back at close. */
export interface SocketObserver {
  socketOpened(socket: HeldSocket): number;
  socketClosed(ticket: number): void;
}
