import { readFileSync } from 'node:fs';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { AppError } from '../errors/index.js';
import { addressBucket } from '../kernel/index.js';
import type { ConnectionEvents, ConnectionScope } from './ports.js';
import { writeAndClose } from './timeouts.js';

/** The connection settings of `config.http` (src/config/http.ts says why each default). */
export interface ConnectionSettings {
  maxConnections: number | 'auto';
  maxConnectionsPerAddress: number;
  connectionFdReserve: number;
}

/** The caps in force, from the settings and the file-descriptor limit read at start. */
export interface ConnectionCaps {
  /** Open connections in total. */
  total: number;
  /** Open connections per client address (an IPv6 client: its /64); 0: no such cap. */
  perAddress: number;
  /** The soft limit of open files the total was derived from. */
  fdLimit: number;
  /** False when the limit could not be read and FALLBACK_FD_LIMIT was assumed. */
  fdLimitKnown: boolean;
  /** The configured total was above what the descriptors allow and was lowered to it. */
  lowered: boolean;
}

/** The soft limit assumed where `/proc/self/limits` cannot be read (not Linux): the usual default. */
const FALLBACK_FD_LIMIT = 1024;
/** Whatever the descriptors, this many connections are allowed (a service that takes none is no service). */
const MIN_TOTAL = 16;
/** Seconds a refused client is asked to wait; its own or others' connections close within seconds. */
const RETRY_AFTER_SECONDS = 1;
/** At most one log line per address and cap in this window, carrying the count refused since the last. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;
/** Addresses whose refusals are logged apart; past this (a flood from many), one line stands for the rest. */
const REFUSAL_LOG_ADDRESSES = 1000;

/** The soft "Max open files" of a `/proc/<pid>/limits` text; Infinity for "unlimited", undefined if absent. */
export function parseFdSoftLimit(limits: string): number | undefined {
  const line = limits.split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
  if (soft === 'unlimited') return Number.POSITIVE_INFINITY;
  const value = Number(soft);
  return soft && Number.isInteger(value) && value > 0 ? value : undefined;
}

/** This process's soft limit of open files. Node has no getrlimit: Linux says it in /proc/self/limits. */
export function readFdLimit(): { limit: number; known: boolean } {
  try {
    const limit = parseFdSoftLimit(readFileSync('/proc/self/limits', 'utf8'));
    if (limit !== undefined) return { limit, known: true };
  } catch {
    // Not Linux (macOS, Windows): assume the common default below.
  }
  return { limit: FALLBACK_FD_LIMIT, known: false };
}

/**
 * The caps: the total is half of the descriptors left once the reserve is set aside (a connection whose
 * request is in flight may open one more, upstream), or the configured number if lower.
 */
export function connectionCaps(settings: ConnectionSettings, fd: { limit: number; known: boolean }): ConnectionCaps {
  const ceiling = Math.max(MIN_TOTAL, Math.floor((fd.limit - settings.connectionFdReserve) / 2));
  const wanted = settings.maxConnections === 'auto' ? ceiling : settings.maxConnections;
  return {
    total: Math.min(wanted, ceiling),
    perAddress: settings.maxConnectionsPerAddress,
    fdLimit: fd.limit,
    fdLimitKnown: fd.known,
    lowered: wanted > ceiling,
  };
}

/**
 * Told of each request's start and end (the graceful stop keeps the requests it may have to end):
 * `requestStarted` answers a ticket, which `requestFinished` gets back once the response has closed.
 */
export interface RequestObserver {
  requestStarted(res: ServerResponse): number;
  requestFinished(ticket: number): void;
}

/** The server's 'upgrade' event's listener. */
export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

interface Connection {
  readonly socket: Socket;
  readonly peer: Peer | undefined;
  /** Requests received and not answered yet (more than one when pipelined). */
  inFlight: number;
  /** Performance time it became idle: its last answer done, no request since. */
  idleSince: number;
  closed: boolean;
}

interface Peer {
  readonly key: string;
  readonly connections: Set<Connection>;
}

export interface ConnectionLimitsOptions {
  logger: Logger;
  events?: ConnectionEvents | undefined;
  requests?: RequestObserver | undefined;
}

/**
 * Caps the open connections per client address and in total, so that one client (or a crowd) cannot
 * take every file descriptor and leave the others with a reset from the kernel. A new connection over a
 * cap first makes room by closing the connection idle longest (kept alive after its answer, no request
 * since), of that address or of anyone; a connection that has never sent a request is not idle (the
 * headers deadline bounds it), one with a request in flight is never closed. With no room, the new
 * connection gets a raw 503 TOO_MANY_CONNECTIONS with `Retry-After` and is closed; refusals are counted
 * (`ConnectionEvents`) and logged at most once per address every 10 s.
 *
 * Per connection: one record and one close listener; per request: a counter and one close listener
 * (shared with the graceful stop through `RequestObserver`).
 */
export class ConnectionLimits {
  readonly caps: ConnectionCaps;
  readonly #connections = new Map<Socket, Connection>();
  /** The idle connections, longest idle first (a Set keeps insertion order). */
  readonly #idle = new Set<Connection>();
  readonly #peers = new Map<string, Peer>();
  readonly #refused = new WeakSet<object>();
  readonly #events: ConnectionEvents | undefined;
  readonly #requests: RequestObserver | undefined;
  readonly #log: RefusalLog;

  constructor(caps: ConnectionCaps, options: ConnectionLimitsOptions) {
    this.caps = caps;
    this.#events = options.events;
    this.#requests = options.requests;
    this.#log = new RefusalLog(options.logger, caps);
    options.events?.openConnections?.(() => this.#connections.size);
  }

  /** Connections open now (refused ones excluded). */
  get open(): number {
    return this.#connections.size;
  }

  /** Watches the server's connections: before its HTTP parser is attached, so a refused one is never parsed. */
  attach(server: Server): void {
    server.prependListener('connection', (socket: Socket) => this.#accept(socket));
  }

  /** The server's request listener: `listener`, with each request counted on its connection until it closes. */
  track(listener: RequestListener): RequestListener {
    const requests = this.#requests;
    return (req, res) => {
      const connection = this.#connections.get(req.socket as Socket);
      // A refused connection's request (sent before the refusal arrived): it has its answer already.
      if (!connection && this.#refused.has(req.socket)) return;
      if (connection && connection.inFlight++ === 0) this.#idle.delete(connection);
      const ticket = requests?.requestStarted(res);
      res.once('close', () => {
        if (connection) this.#answered(connection);
        if (ticket !== undefined) requests?.requestFinished(ticket);
      });
      listener(req, res);
    };
  }

  /**
   * The server's 'upgrade' listener: `listener`, with the connection held busy until it closes. An upgraded
   * socket (a WebSocket) keeps counting against the caps and is never closed as idle to make room: its
   * route's own idle deadline closes it.
   */
  trackUpgrades(listener: UpgradeListener): UpgradeListener {
    return (req, socket, head) => {
      const connection = this.#connections.get(socket as Socket);
      // A refused connection's upgrade (sent before the refusal arrived): it has its answer already.
      if (!connection && this.#refused.has(socket)) return;
      if (connection) {
        connection.inFlight++;
        this.#idle.delete(connection);
      }
      listener(req, socket, head);
    };
  }

  #accept(socket: Socket): void {
    const address = socket.remoteAddress ?? '';
    const { perAddress, total } = this.caps;
    const key = perAddress > 0 ? addressBucket(address) : undefined;
    if (key !== undefined) {
      const peer = this.#peers.get(key);
      if (peer && peer.connections.size >= perAddress && !this.#closeIdle(peer)) {
        this.#refuse(socket, address, 'per_address');
        return;
      }
    }
    if (this.#connections.size >= total && !this.#closeIdle(undefined)) {
      this.#refuse(socket, address, 'total');
      return;
    }
    // Looked up again: closing an idle connection above may have closed its address's last one.
    let peer: Peer | undefined;
    if (key !== undefined) {
      peer = this.#peers.get(key);
      if (!peer) {
        peer = { key, connections: new Set() };
        this.#peers.set(key, peer);
      }
    }
    const connection: Connection = { socket, peer, inFlight: 0, idleSince: 0, closed: false };
    this.#connections.set(socket, connection);
    peer?.connections.add(connection);
    socket.once('close', () => this.#forget(connection));
  }

  /** Closes the connection idle longest, of `peer` or of anyone; false when there is none. */
  #closeIdle(peer: Peer | undefined): boolean {
    let oldest: Connection | undefined;
    if (peer) {
      // At most the per-address cap to look through, and only when that address is at its cap.
      for (const c of peer.connections) {
        if (c.inFlight === 0 && this.#idle.has(c) && (!oldest || c.idleSince < oldest.idleSince)) oldest = c;
      }
    } else {
      oldest = this.#idle.values().next().value;
    }
    if (!oldest) return false;
    this.#forget(oldest);
    oldest.socket.destroy();
    this.#events?.idleClosed?.(peer ? 'per_address' : 'total');
    return true;
  }

  #refuse(socket: Socket, address: string, scope: ConnectionScope): void {
    this.#refused.add(socket);
    const perAddress = scope === 'per_address';
    const max = perAddress ? this.caps.perAddress : this.caps.total;
    writeAndClose(
      socket,
      new AppError(
        'TOO_MANY_CONNECTIONS',
        perAddress
          ? `Too many open connections from your address (at most ${max}); reuse or close some`
          : `The server holds as many connections as it can (${max}); try again shortly`,
        { limit: scope, max_connections: max },
        { 'Retry-After': String(RETRY_AFTER_SECONDS) },
      ),
    );
    this.#events?.refused(scope);
    this.#log.refused(address, scope, this.#connections.size);
  }

  #answered(connection: Connection): void {
    connection.inFlight--;
    if (connection.inFlight > 0 || connection.closed) return;
    connection.idleSince = performance.now();
    this.#idle.add(connection);
  }

  #forget(connection: Connection): void {
    if (connection.closed) return;
    connection.closed = true;
    this.#connections.delete(connection.socket);
    this.#idle.delete(connection);
    const peer = connection.peer;
    if (peer) {
      peer.connections.delete(connection);
      if (peer.connections.size === 0) this.#peers.delete(peer.key);
    }
  }
}

/** Refusals logged at most once per address and cap every REFUSAL_LOG_INTERVAL_MS, with the count since. */
class RefusalLog {
  readonly #logger: Logger;
  readonly #caps: ConnectionCaps;
  readonly #last = new Map<string, { at: number; count: number }>();

  constructor(logger: Logger, caps: ConnectionCaps) {
    this.#logger = logger;
    this.#caps = caps;
  }

  refused(address: string, scope: ConnectionScope, open: number): void {
    const now = performance.now();
    let key = `${scope} ${address}`;
    let entry = this.#last.get(key);
    if (!entry && this.#last.size >= REFUSAL_LOG_ADDRESSES) {
      for (const [k, e] of this.#last) if (now - e.at >= REFUSAL_LOG_INTERVAL_MS) this.#last.delete(k);
      if (this.#last.size >= REFUSAL_LOG_ADDRESSES) {
        key = `${scope} *`;
        entry = this.#last.get(key);
      }
    }
    if (entry && now - entry.at < REFUSAL_LOG_INTERVAL_MS) {
      entry.count++;
      return;
    }
    this.#logger.warn(
      {
        address: key.endsWith(' *') ? 'many addresses' : address,
        limit: scope,
        refused: (entry?.count ?? 0) + 1,
        open_connections: open,
        max_connections: this.#caps.total,
        max_connections_per_address: this.#caps.perAddress,
      },
      'connections refused',
    );
    this.#last.set(key, { at: now, count: 0 });
  }
}
