import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { OpenAPIBackend } from 'openapi-backend';
import { WebSocketServer } from 'ws';
import { AppError, asAppError } from '../errors/index.js';
import type { UpgradeListener } from './connection-limits.js';
import { aliasedPath } from './path-aliases.js';
import type { HttpPorts } from './ports.js';
import { newRequestId } from './request-context.js';
import { keyRefusal, presentedKey, refuseAmbiguousCredentials } from './security.js';
import { type RouteRuntime, type SessionSettings, SocketSessionRunner } from './socket-session.js';
import type { SocketObserver, UpgradeRoute } from './socket-types.js';
import { writeAndClose } from './timeouts.js';
import { validationError } from './validation-error.js';

/** RFC 6455 §4.1: the key is a nonce of 16 bytes, in base64. */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;
/** How a message is validated: as the JSON body of a request to its operation. */
const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * Node's `shouldUpgradeCallback`: only WebSocket upgrades reach the 'upgrade' listener. Any other `Upgrade`
 * (curl's `--http2` sends `h2c`) is served as the HTTP/1.1 request it also is, which RFC 9110 §7.8 allows.
 */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return req.headers.upgrade?.toLowerCase() === 'websocket';
}

export interface UpgradeOptions {
  /** The contract (app.ts createOpenApi): each route's operation, its body limit and its validation. */
  api: OpenAPIBackend;
  /** How long a socket may stay without a message in hand (http.keepAliveTimeoutMs). */
  idleTimeoutMs: number;
  /** The graceful stop, told of every open socket. */
  sockets?: SocketObserver | undefined;
}

interface Route extends RouteRuntime {
  server: WebSocketServer;
}

/** The message check and the handshake of a route; its messages are at most its operation's body limit. */
function routeOf(route: UpgradeRoute, api: OpenAPIBackend, bodyLimitBytes: number): Route {
  const operation = api.router.getOperation(route.operationId);
  if (!operation) throw new Error(`the WebSocket route ${route.path} names no operation: ${route.operationId}`);
  const limit = (operation as { 'x-body-limit-bytes'?: number })['x-body-limit-bytes'] ?? bodyLimitBytes;
  const request = { method: operation.method, path: operation.path, headers: JSON_HEADERS, query: {} };
  return {
    route,
    server: new WebSocketServer({ noServer: true, clientTracking: false, perMessageDeflate: false, maxPayload: limit }),
    validate(json) {
      const result = api.validateRequest({ ...request, body: json as object }, operation);
      if (!result.valid) throw validationError(result.errors ?? []);
      return json;
    },
  };
}

/** What a WebSocket handshake must carry beyond `Upgrade: websocket` (RFC 6455 §4.2.1). */
function refuseBadHandshake(req: IncomingMessage): void {
  const version = req.headers['sec-websocket-version'];
  if (version !== '13' && version !== '8') {
    throw new AppError(
      'MALFORMED_REQUEST',
      'The WebSocket handshake needs Sec-WebSocket-Version: 13',
      { reason: 'sec-websocket-version' },
      { 'Sec-WebSocket-Version': '13' },
    );
  }
  if (!WEBSOCKET_KEY.test(req.headers['sec-websocket-key'] ?? '')) {
    throw new AppError('MALFORMED_REQUEST', 'The WebSocket handshake needs a Sec-WebSocket-Key: 16 bytes in base64', {
      reason: 'sec-websocket-key',
    });
  }
}

/**
 * The server's 'upgrade' listener (a WebSocket upgrade, isWebSocketUpgrade): the route by exact path (404
 * otherwise), GET only (405), a well-formed handshake (400), then the key as for any request: one credential
 * (400 AMBIGUOUS_CREDENTIALS), `HttpPorts.authenticate` (401, or the failed-authentication 429 of
 * `HttpPorts.authenticationFailed`); every refusal is the error body written on the socket, which then closes.
 * An accepted socket becomes a session (socket-session.ts). No admission here: each message is admitted.
 */
export function upgradeRequests(ports: HttpPorts, options: UpgradeOptions): UpgradeListener {
  const routes = new Map<string, Route>();
  for (const route of ports.upgrades ?? []) {
    routes.set(route.path, routeOf(route, options.api, ports.bodyLimitBytes));
  }
  const settings: SessionSettings = { ports, idleTimeoutMs: options.idleTimeoutMs, sockets: options.sockets };
  const requestIds = new WeakMap<IncomingMessage, string>();
  for (const { server } of routes.values()) {
    server.on('headers', (headers: string[], req: IncomingMessage) => {
      const id = requestIds.get(req);
      if (id) headers.push(`X-Request-Id: ${id}`);
    });
  }

  const accept = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const route = routes.get(aliasedPath(ports.pathAliases ?? [], query === -1 ? url : url.slice(0, query)));
    if (!route) throw new AppError('NOT_FOUND', 'No WebSocket endpoint at this path');
    if (req.method !== 'GET') {
      throw new AppError(
        'METHOD_NOT_ALLOWED',
        `${req.method} is not allowed here; a WebSocket opens with GET`,
        { allowed: ['GET'] },
        { Allow: 'GET' },
      );
    }
    refuseBadHandshake(req);
    if (ports.stopping?.stopped) throw ports.stopping.reason;
    refuseAmbiguousCredentials(req);
    const key = presentedKey(req.headers);
    const principal = key === undefined ? undefined : await ports.authenticate(key);
    if (!principal) throw await keyRefusal(ports, req.socket.remoteAddress ?? '');
    // The client may have left while its key was looked up.
    if (socket.destroyed) return;
    const requestId = newRequestId();
    requestIds.set(req, requestId);
    const log = ports.logger.child({ request_id: requestId, websocket: route.route.path });
    route.server.handleUpgrade(req, socket, head, (ws) => {
      new SocketSessionRunner(ws, principal, log, route, settings);
    });
  };

  return (req, socket, head) => {
    // Node's error listener leaves an upgraded connection: a reset while its key is checked must not throw.
    socket.on('error', () => socket.destroy());
    accept(req, socket, head).catch((err: unknown) => {
      const error = asAppError(err);
      if (error.code === 'INTERNAL_ERROR') ports.logger.error({ err }, 'a websocket upgrade failed');
      if (!socket.destroyed) writeAndClose(socket, error);
    });
  };
}
