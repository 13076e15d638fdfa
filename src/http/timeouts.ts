import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { AppError, errorBody } from '../errors/index.js';

/** The HTTP server's deadlines for slow clients (the body's own pause limit is the body reader's). */
export interface ServerTimeouts {
  /** The time a client has to send its request line and headers. */
  headersTimeoutMs: number;
  /** The time a client has to send its whole request, headers and body. */
  requestTimeoutMs: number;
  /** How long an idle connection is kept open between two requests. */
  keepAliveTimeoutMs: number;
}

/**
 * How often Node compares open connections with the two deadlines. Its default, 30 s, let a deadline
 * pass by up to 30 s; the check walks the connections with a request in progress, which is cheap.
 */
const DEADLINE_CHECK_INTERVAL_MS = 1000;
/** How long an answer written by `answerClientError` may take to leave before the socket is destroyed. */
const LAST_WRITE_GRACE_MS = 1000;

/**
 * Sets the server's deadlines for slow clients and answers what Node refuses before the app sees a
 * request (a deadline passed, headers too large, HTTP that does not parse, CONNECT) with the error body
 * instead of Node's bare status line or a silent close. Call before `listen`.
 */
export function applyServerTimeouts(server: Server, timeouts: ServerTimeouts, logger: Logger): void {
  server.headersTimeout = timeouts.headersTimeoutMs;
  server.requestTimeout = timeouts.requestTimeoutMs;
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  // Read by Node when the server starts listening.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = DEADLINE_CHECK_INTERVAL_MS;
  server.on('clientError', answerClientError(timeouts, logger));
  // Without a listener Node closes a CONNECT's connection without a word; this is no proxy.
  server.on('connect', (_req: unknown, socket: Duplex) => {
    writeAndClose(
      socket,
      new AppError('METHOD_NOT_ALLOWED', 'CONNECT is not allowed: this server is not a proxy', { method: 'CONNECT' }),
    );
  });
}

/** Connections whose request was answered before its body had arrived; its rest is being dropped. */
const answeredEarly = new WeakSet<object>();

/**
 * Marks a request answered before its whole body arrived and drops the rest of the body as it comes.
 * Closing at once would make the kernel reset a connection with unread data, and a client still sending
 * would often lose the answer with it; the request deadline still bounds how long the rest may take.
 * Should that deadline pass, the connection is closed without a second answer.
 */
export function answeredBeforeItsBody(req: IncomingMessage): void {
  const { socket } = req;
  answeredEarly.add(socket);
  req.once('end', () => answeredEarly.delete(socket));
  req.resume();
}

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  413: 'Content Too Large',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The product's error for what Node's HTTP parser or its deadlines refused. */
export function clientErrorOf(err: Error & { code?: string }, timeouts: ServerTimeouts): AppError {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError(
        'REQUEST_TIMEOUT',
        'The request did not arrive in time',
        { headers_timeout_ms: timeouts.headersTimeoutMs, request_timeout_ms: timeouts.requestTimeoutMs },
        {},
        { cause: err },
      );
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('HEADERS_TOO_LARGE', 'The request line and headers are too large', null, {}, { cause: err });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError('PAYLOAD_TOO_LARGE', 'The chunk extensions are too large', null, {}, { cause: err });
    default:
      return new AppError(
        'MALFORMED_REQUEST',
        'The request is not valid HTTP/1.1',
        { reason: err.code ?? 'parse error' },
        {},
        { cause: err },
      );
  }
}

/**
 * Node's 'clientError' listener: like Node's own (an answer only when the socket is writable and no
 * response has started on it, then the connection closes), with the error body. Such errors are the
 * client's, logged at debug level only.
 */
function answerClientError(timeouts: ServerTimeouts, logger: Logger) {
  return (err: Error & { code?: string }, socket: Duplex) => {
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    // A request answered before its body, whose answer is out: the rest of the body is what broke.
    const alreadyAnswered = answeredEarly.has(socket) && !inFlight;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent || alreadyAnswered) {
      socket.destroy();
      return;
    }
    const error = clientErrorOf(err, timeouts);
    logger.debug({ code: err.code, answer: error.code }, 'client error');
    writeAndClose(socket, error);
  };
}

/**
 * Writes `error` as a whole HTTP response straight to the socket (with its headers, e.g. Retry-After),
 * then closes it: for what is answered before, or instead of, Node's HTTP handling.
 */
export function writeAndClose(socket: Duplex, error: AppError): void {
  const body = JSON.stringify(errorBody(error));
  const status = error.status;
  let extra = '';
  for (const [name, value] of Object.entries(error.headers)) extra += `${name}: ${value}\r\n`;
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      extra +
      'Connection: close\r\n\r\n' +
      body,
    () => socket.destroy(),
  );
  setTimeout(() => socket.destroy(), LAST_WRITE_GRACE_MS).unref();
}
