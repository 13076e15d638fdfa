import type { Logger } from 'pino';
import { type RawData, WebSocket } from 'ws';
import { AppError, asAppError, errorBody } from '../errors/index.js';
import type { Principal } from '../kernel/index.js';
import { parseJson } from './body.js';
import { CLIENT_CLOSED_REQUEST, ClientDisconnectedError, STREAM_STALLED } from './call.js';
import type { HttpPorts, ServerSpan } from './ports.js';
import { newRequestId, newUsageNote, usageRow } from './request-context.js';
import type {
  HeldSocket,
  MessageCall,
  SocketHandler,
  SocketObserver,
  SocketSession,
  UpgradeRoute,
} from './socket-types.js';

/**
 * Messages that may wait behind the one in hand. A client that sends more before its answers come is not
 * taking turns: its socket is closed (1008), rather than an error message landing among another answer's events.
 */
const MAX_WAITING = 16;
/** What the socket may buffer before `send` waits for it to drain (Node's own high-water mark for sockets). */
const HIGH_WATER_BYTES = 64 * 1024;

type SessionPorts = Pick<
  HttpPorts,
  'admit' | 'endOfRequest' | 'clock' | 'maxJsonDepth' | 'stopping' | 'streamWriteTimeoutMs' | 'tracing'
>;

export interface SessionSettings {
  ports: SessionPorts;
  /** How long a socket may go without a message in hand before it is closed (http.keepAliveTimeoutMs). */
  idleTimeoutMs: number;
  sockets?: SocketObserver | undefined;
}

/** A route with its messages' check: the operation's body validation (upgrade.ts). */
export interface RouteRuntime {
  route: UpgradeRoute;
  validate(json: unknown): unknown;
}

interface Received {
  data: RawData;
  isBinary: boolean;
  startedAt: number;
}

/**
 * One open socket of a WebSocket route: its messages taken one at a time, in order (the rest wait, up to
 * MAX_WAITING), each a request of the route's operation with its own request id, admission, disconnect signal
 * and usage row, as an HTTP request has; the socket closed after `idleTimeoutMs` with no message in hand, and by
 * the graceful stop once the message in hand is answered.
 */
export class SocketSessionRunner implements SocketSession, HeldSocket {
  readonly principal: Principal;
  readonly log: Logger;
  readonly #ws: WebSocket;
  readonly #route: RouteRuntime;
  readonly #settings: SessionSettings;
  readonly #handler: SocketHandler;
  readonly #waiting: Received[] = [];
  #inHand: SocketCall | undefined;
  #idle: NodeJS.Timeout | undefined;
  #draining = false;
  #stalled = false;
  #ticket: number | undefined;

  constructor(ws: WebSocket, principal: Principal, log: Logger, route: RouteRuntime, settings: SessionSettings) {
    this.#ws = ws;
    this.principal = principal;
    this.log = log;
    this.#route = route;
    this.#settings = settings;
    this.#handler = route.route.open(this);
    ws.on('message', (data, isBinary) => this.#received({ data, isBinary, startedAt: performance.now() }));
    ws.on('error', (err) => log.debug({ err }, 'websocket error'));
    ws.once('close', () => this.#closed());
    this.#armIdle();
    // Last: a socket opened during a stop is drained at once.
    this.#ticket = settings.sockets?.socketOpened(this);
  }

  get open(): boolean {
    return this.#ws.readyState === WebSocket.OPEN;
  }

  send(text: string): Promise<void> | void {
    const ws = this.#ws;
    if (ws.readyState !== WebSocket.OPEN) throw new ClientDisconnectedError();
    if (ws.bufferedAmount < HIGH_WATER_BYTES) {
      ws.send(text);
      return;
    }
    // Full: this message's write completes once everything before it has left.
    return new Promise((resolve, reject) => {
      const stall = setTimeout(() => this.#cutStalled(), this.#settings.ports.streamWriteTimeoutMs);
      ws.send(text, (err) => {
        clearTimeout(stall);
        if (err) reject(new ClientDisconnectedError());
        else resolve();
      });
    });
  }

  drain(): void {
    this.#draining = true;
    this.#waiting.length = 0;
    if (!this.#inHand) this.#ws.close(1001, 'the server is stopping');
  }

  terminate(): void {
    this.#ws.terminate();
  }

  /** `json` as the route's operation's body (the same 400 as HTTP's), for the message's call. */
  validate(json: unknown): unknown {
    return this.#route.validate(json);
  }

  #received(message: Received): void {
    if (this.#draining) return;
    clearTimeout(this.#idle);
    if (this.#waiting.length >= MAX_WAITING) {
      this.#ws.close(1008, `more than ${MAX_WAITING} messages waiting: send one after each answer`);
      return;
    }
    this.#waiting.push(message);
    this.#next();
  }

  #next(): void {
    const message = this.#inHand ? undefined : this.#waiting.shift();
    if (!message) return;
    const call = new SocketCall(this, this.#settings.ports, message.startedAt);
    this.#inHand = call;
    // While tracing, each message is a server span of its own (a trace of its own: the upgrade's is over).
    const span = this.#settings.ports.tracing?.start('WEBSOCKET', this.#route.route.path, {});
    const answered = span ? span.run(() => this.#answer(message, call, span)) : this.#answer(message, call);
    void answered.finally(() => {
      this.#inHand = undefined;
      if (this.#draining) this.#ws.close(1001, 'the server is stopping');
      else if (this.#waiting.length > 0) this.#next();
      else this.#armIdle();
    });
  }

  async #answer(message: Received, call: SocketCall, span?: ServerSpan): Promise<void> {
    const { ports } = this.#settings;
    let status = 200;
    try {
      // Every message counts against the limits, whatever it holds.
      const admission = await ports.admit(this.principal);
      if (admission.refusal) throw admission.refusal;
      if (message.isBinary) {
        throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Messages are JSON text: send a text frame, not a binary one');
      }
      const json = parseJson(message.data.toString(), ports.maxJsonDepth);
      await this.#handler.message(json, call);
    } catch (err) {
      status = await this.#failed(err, call);
    } finally {
      call.end();
    }
    if (this.#stalled) status = STREAM_STALLED;
    else if (call.usage.clientClosed) status = CLIENT_CLOSED_REQUEST;
    const { operationId, path } = this.#route.route;
    const accountId = this.principal.account.id;
    span?.end({ operationId, route: path, accountId, status, errorCode: call.usage.errorCode });
    const row = usageRow(
      this.principal,
      call.requestId,
      operationId,
      call.usage,
      status,
      call.startedAt,
      ports.clock(),
    );
    try {
      await ports.endOfRequest(row);
    } catch (err) {
      call.log.error({ err }, 'recording a websocket message failed');
    }
  }

  /** A message that failed: its error message sent (the socket stays open), its status for the usage row. */
  async #failed(err: unknown, call: SocketCall): Promise<number> {
    if (err instanceof ClientDisconnectedError || !this.open) {
      call.usage.clientClosed = true;
      return CLIENT_CLOSED_REQUEST;
    }
    const error = asAppError(err);
    call.usage.errorCode = error.code;
    if (error.code === 'INTERNAL_ERROR') call.log.error({ err }, 'unhandled error');
    try {
      await this.send(JSON.stringify({ type: 'error', status: error.status, error: errorBody(error).error }));
    } catch {
      // The client left meanwhile: the status stands for the usage row.
    }
    return error.status;
  }

  #armIdle(): void {
    const ms = this.#settings.idleTimeoutMs;
    this.#idle = setTimeout(() => this.#ws.close(1000, `no message for ${ms} ms`), ms);
    this.#idle.unref();
  }

  #cutStalled(): void {
    this.#stalled = true;
    this.log.warn(
      { stream_write_timeout_ms: this.#settings.ports.streamWriteTimeoutMs },
      'cut a websocket whose client stopped reading',
    );
    this.#ws.terminate();
  }

  #closed(): void {
    clearTimeout(this.#idle);
    this.#waiting.length = 0;
    this.#inHand?.disconnected();
    if (this.#ticket !== undefined) this.#settings.sockets?.socketClosed(this.#ticket);
  }
}

/** A message's Call: its request id, usage note and disconnect signal (made when asked for), as KoaCall's. */
class SocketCall implements MessageCall {
  readonly requestId = newRequestId();
  readonly principal: Principal;
  readonly usage = newUsageNote();
  readonly #session: SocketSessionRunner;
  readonly #ports: SessionPorts;
  #log: Logger | undefined;
  #controller: AbortController | undefined;
  #ticket: number | undefined;

  constructor(
    session: SocketSessionRunner,
    ports: SessionPorts,
    readonly startedAt: number,
  ) {
    this.#session = session;
    this.#ports = ports;
    this.principal = session.principal;
  }

  get log(): Logger {
    this.#log ??= this.#session.log.child({ request_id: this.requestId });
    return this.#log;
  }

  body(json: unknown): never {
    return this.#session.validate(json) as never;
  }

  disconnectSignal(): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const controller = new AbortController();
    this.#controller = controller;
    const stopping = this.#ports.stopping;
    if (!this.#session.open) controller.abort(new ClientDisconnectedError());
    else if (stopping?.stopped) controller.abort(stopping.reason);
    else if (stopping) this.#ticket = stopping.follow((reason) => controller.abort(reason));
    return controller.signal;
  }

  /** The socket closed while this message was in hand: its work stops. */
  disconnected(): void {
    this.#controller?.abort(new ClientDisconnectedError());
  }

  end(): void {
    if (this.#ticket !== undefined) this.#ports.stopping?.unfollow(this.#ticket);
    this.#ticket = undefined;
  }
}
