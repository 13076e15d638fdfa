import type { Server, ServerResponse } from 'node:http';
import type { HeldSocket, RequestObserver, SocketObserver } from './http/index.js';
import { SlotList } from './kernel/index.js';
import type { Lifecycle } from './system/index.js';

/** How long the requests ended at the grace deadline get for their last bytes (a final event, a 503). */
export const FINAL_ANSWERS_MS = 1000;

export interface ShutdownOptions {
  /** How long requests in flight may take to finish (config.shutdownGraceMs). */
  graceMs: number;
  /** Then how long the ones still running get to send their last answer. Default FINAL_ANSWERS_MS. */
  finalMs?: number;
}

export interface ShutdownReport {
  /** Requests in flight when the stop began. */
  inFlight: number;
  /** Requests still running at the grace deadline, told to end. */
  ended: number;
  /** Requests whose connection was closed under them after the final window. */
  cut: number;
  /** WebSockets open when the stop began (each closed once its message in hand was answered). */
  sockets: number;
  /** WebSockets still open after the final window, closed then. */
  socketsCut: number;
  ms: number;
}

/**
 * The graceful stop of a Node HTTP server, the way an orchestrator stops a replica. It counts the requests
 * in flight; stop() then refuses new connections (the listening socket closes), makes every answer not
 * yet begun close its connection (`Connection: close`) and closes each kept-alive connection as soon as it
 * is idle, waits for the requests in flight up to the grace period, then ends the rest through the
 * Lifecycle (a stream gets a final error event, any other request a 503) and gives them `finalMs` for those
 * answers before it closes every connection. It learns of each request from the connection tracker
 * (`ConnectionLimits`, which counts them per connection too), as its `RequestObserver`; of each WebSocket from
 * the upgrade routes (http/upgrade.ts), as their `SocketObserver`: a socket closes once its message in hand is
 * answered, is waited for as a request is, and is closed at the end like any connection.
 */
export class GracefulShutdown implements RequestObserver, SocketObserver {
  readonly #lifecycle: Lifecycle;
  /** Not a Set: a Set's old tables keep what came after them (kernel/slot-list.ts). */
  readonly #inFlight = new SlotList<ServerResponse>();
  /** Open WebSockets (http/upgrade.ts): each drained at the stop, and waited for as requests are. */
  readonly #sockets = new SlotList<HeldSocket>();
  #server: Server | undefined;
  /** Called when the last request in flight finishes (during a stop). */
  #onIdle: (() => void) | undefined;
  /** Ends the grace period now (a second signal). */
  #hurry: (() => void) | undefined;
  #hurried = false;

  constructor(lifecycle: Lifecycle) {
    this.#lifecycle = lifecycle;
  }

  /** A request arrived: counted until its response closes; during a stop its connection closes after it. */
  requestStarted(res: ServerResponse): number {
    if (this.#lifecycle.draining) res.shouldKeepAlive = false;
    return this.#inFlight.add(res);
  }

  requestFinished(ticket: number): void {
    this.#finished(ticket);
  }

  /** A WebSocket opened: during a stop it closes once its message in hand is answered, at once if none is. */
  socketOpened(socket: HeldSocket): number {
    const ticket = this.#sockets.add(socket);
    if (this.#lifecycle.draining) socket.drain();
    return ticket;
  }

  socketClosed(ticket: number): void {
    this.#sockets.delete(ticket);
    if (this.#lifecycle.draining && this.#busy() === 0) this.#onIdle?.();
  }

  /** Skips what is left of the grace period: work in flight is ended now. */
  hurry(): void {
    this.#hurried = true;
    this.#hurry?.();
  }

  async stop(server: Server, options: ShutdownOptions): Promise<ShutdownReport> {
    const started = performance.now();
    this.#server = server;
    this.#lifecycle.drain();
    const inFlight = this.#inFlight.size;
    const sockets = this.#sockets.size;
    for (const res of this.#inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
    for (const socket of this.#sockets) socket.drain();
    // Stops listening and closes the idle kept-alive connections; resolves once every connection closed.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    let ended = 0;
    if (!(await this.#allFinishWithin(options.graceMs, true))) {
      ended = this.#inFlight.size;
      this.#lifecycle.endWork();
      await this.#allFinishWithin(options.finalMs ?? FINAL_ANSWERS_MS, false);
    }
    const cut = this.#inFlight.size;
    const socketsCut = this.#sockets.size;
    // Upgraded sockets are no longer the HTTP server's: closeAllConnections does not reach them.
    for (const socket of this.#sockets) socket.terminate();
    server.closeAllConnections();
    await closed;
    return { inFlight, ended, cut, sockets, socketsCut, ms: Math.round(performance.now() - started) };
  }

  #finished(ticket: number): void {
    this.#inFlight.delete(ticket);
    if (!this.#lifecycle.draining) return;
    // An answer begun before the stop kept its connection alive: close it now that it is idle.
    const server = this.#server;
    if (server) setImmediate(() => server.closeIdleConnections());
    if (this.#busy() === 0) this.#onIdle?.();
  }

  /** Requests in flight and open WebSockets: what the stop waits for. */
  #busy(): number {
    return this.#inFlight.size + this.#sockets.size;
  }

  /** Whether every request in flight finishes within `ms`; a hurry() ends a hurriable wait at once. */
  #allFinishWithin(ms: number, hurriable: boolean): Promise<boolean> {
    if (this.#busy() === 0) return Promise.resolve(true);
    if (hurriable && this.#hurried) return Promise.resolve(false);
    return new Promise((resolve) => {
      const settle = (allFinished: boolean) => {
        clearTimeout(timer);
        this.#onIdle = undefined;
        this.#hurry = undefined;
        resolve(allFinished);
      };
      const timer = setTimeout(() => settle(false), ms);
      this.#onIdle = () => settle(true);
      if (hurriable) this.#hurry = () => settle(false);
    });
  }
}
