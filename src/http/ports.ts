import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Clock } from '../clock/index.js';
import type { AppError } from '../errors/index.js';
import type { Principal } from '../kernel/index.js';
import type { PathAlias } from './path-aliases.js';
import type { UpgradeRoute } from './socket-types.js';
import type { RequestContent } from './types.js';

/** One authenticated request, as its usage row records it. */
export interface RequestRecord {
  accountId: string;
  keyId: string | null;
  requestId: string;
  /** The operationId, e.g. createChatCompletion. */
  endpoint: string;
  model: string | null;
  /** The end user the request named (UsageNote.userId); null when it named none. */
  userId?: string | null | undefined;
  status: number;
  promptTokens: number;
  completionTokens: number;
  credits: number;
  latencyMs: number;
  /** Milliseconds from the request's start to the first token of its answer (chat only). */
  ttftMs?: number | undefined;
  /** The status of the error that ended a stream after its 200 (the usage row keeps `status` 200). */
  failedStatus?: number | undefined;
  /** The `code` of the error answered, or of the one that ended a stream after its 200. */
  errorCode?: string | undefined;
  /** The request's input and answer text, noted only for an account that keeps it (`log_content`). */
  content?: RequestContent | undefined;
  cached: boolean;
  createdAt: number;
}

/**
 * The rate limiter's answer for one request: the headers every response carries, and a refusal (429 with
 * its Retry-After). Both are made by the product (src/limits/); the HTTP layer writes them as given.
 */
interface Admission {
  headers: Record<string, string>;
  refusal?: AppError;
}

/** Which cap refused a connection, or made room by closing an idle one: its address's, or the server's. */
export type ConnectionScope = 'per_address' | 'total';

/** What the connection caps (connection-limits.ts) tell the product: metrics count them. */
export interface ConnectionEvents {
  /** A connection was refused with 503 TOO_MANY_CONNECTIONS. */
  refused(scope: ConnectionScope): void;
  /** An idle kept-alive connection was closed to make room for a new one. */
  idleClosed?(scope: ConnectionScope): void;
  /** Given once, at start: reads how many connections are open now (for a gauge read at scrape time). */
  openConnections?(read: () => number): void;
}

/** How a request ended, as its server span records it. */
export interface RequestOutcome {
  /** The operationId, once routed. */
  operationId: string | undefined;
  /** The contract's path template, once routed. */
  route: string | undefined;
  /** The account of the key, once authenticated (never the key). */
  accountId: string | undefined;
  /** As the usage row has it (499 client gone). */
  status: number;
  /** The error body's `code`, when the answer was an error. */
  errorCode: string | undefined;
}

/** The server span of one request (or one WebSocket message). */
export interface ServerSpan {
  readonly traceId: string;
  /** Runs `fn` with this span active: what it starts is its child, and outgoing calls carry its trace. */
  run<T>(fn: () => T): T;
  /** Once the response is over (a stream's after its last byte). */
  end(outcome: RequestOutcome): void;
}

/** Traces requests (src/tracing/, wired by compose.ts); absent when tracing is off, and no stage runs. */
export interface RequestTracing {
  /** The server span of a request, continuing the trace of its `traceparent` and `tracestate` headers. */
  start(method: string, path: string, headers: Readonly<Record<string, string | string[] | undefined>>): ServerSpan;
}

/**
 * Routes outside the contract (HTML pages, forms): requests whose path starts with `prefix` go to
 * `middleware` (a koa-router's `routes()`, say) instead of openapi-backend. They run after the request id
 * and the error mapping, before CORS and the contract's body reader: the middleware reads its own bodies,
 * answers its own errors, and nothing it serves is recorded as API usage.
 */
export interface ExtraRoutes {
  prefix: string;
  middleware: Koa.Middleware;
}

/**
 * What the HTTP layer needs from the product, and nothing else: it knows no capability. The
 * composition root (src/compose.ts) implements these with the accounts, limits and usage capabilities.
 */
export interface HttpPorts {
  clock: Clock;
  logger: Logger;
  /** Traces each request (a server span); undefined: tracing is off. */
  tracing?: RequestTracing | undefined;
  /** Where the access log's line per request goes (at `info`); undefined: no access log. */
  accessLog?: Logger | undefined;
  /** The largest request body, in bytes, as sent and once decompressed (413 past it). */
  bodyLimitBytes: number;
  /** The deepest nesting of arrays and objects a JSON body may have (400 `NESTING_TOO_DEEP` past it). */
  maxJsonDepth: number;
  /** How long a request body may stop arriving before the request is answered 408 `REQUEST_TIMEOUT`. */
  bodyIdleTimeoutMs: number;
  /**
   * How long a streamed answer may wait with its socket's buffers full (the client reads nothing) before
   * its connection is cut and its work aborted.
   */
  streamWriteTimeoutMs: number;
  /** The origins browser apps may call the API from (CORS): exact origins, or `*` for any; empty: none. */
  corsOrigins: readonly string[];
  /** Undefined: the admin API is disabled (503). */
  adminToken: string | undefined;
  /** The principal for a presented API key, or undefined for a malformed, unknown or revoked one. */
  authenticate(secret: string): Promise<Principal | undefined>;
  /**
   * Counts a failed authentication from `address`; once it has failed too often, the refusal to answer
   * instead of the 401 (429 with its Retry-After, made by the product), else null. Asynchronous: replicas
   * may count in a shared store.
   */
  authenticationFailed(address: string): Promise<AppError | null>;
  /** Counts an authenticated request against its account's limits. */
  admit(principal: Principal): Promise<Admission>;
  /**
   * The end of every authenticated request, whatever its outcome: what the product records of it (the usage row,
   * the SLA bucket, the metrics: each capability's own, composed by the product).
   */
  endOfRequest(record: RequestRecord): Promise<void> | void;
  /**
   * The server's stop of the work in flight (its graceful stop's deadline); the reason is the error to
   * answer. Every request's `Call.disconnectSignal()` follows it.
   */
  stopping?: WorkStop;
  /** Told of refused and closed connections by the connection caps (applied to the server in server.ts). */
  connections?: ConnectionEvents;
  /**
   * Other prefixes of the same paths (`/v1` for `/z1`): a request under one is served as the path it stands for,
   * by HTTP and WebSocket routes alike.
   */
  pathAliases?: readonly PathAlias[];
  /** Routes outside the contract, matched by path prefix before the contract's routing. */
  extraRoutes?: readonly ExtraRoutes[];
  /** Idempotency-Key on POST operations; undefined: the header is ignored. */
  idempotency?: IdempotencyPort;
  /** WebSocket routes, matched by exact path (upgrade.ts); a WebSocket upgrade anywhere else is answered 404. */
  upgrades?: readonly UpgradeRoute[];
}

/** A keyed POST as the idempotency port sees it: the scope (account id, or `admin`), the key, what makes it this request. */
export interface IdempotentRequest {
  scope: string;
  key: string;
  /** A hash of method, path, query, content type and body (a streamed upload's: without its body, see `settle`). */
  fingerprint: string;
  /**
   * A streamed upload's whole fingerprint, its body read (drained) and hashed: compared with an answered record's,
   * whose fingerprint its first attempt's body gave as it streamed to the handler.
   */
  settle?: () => Promise<string>;
  /** The operationId. */
  endpoint: string;
}

/** An answer as a replay gives it again. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** A won claim: its answer handed over once the response is over, or the key released. */
export interface IdempotentClaim {
  /** The answer to keep; `body` null when it was over `maxResponseBytes` (kept without it). */
  finish(answer: {
    status: number;
    headers: Record<string, string>;
    body: Buffer | null;
    userId: string | null;
    /** A streamed upload's whole fingerprint, once its body was read. */
    fingerprint?: string | undefined;
  }): void;
  /** No answer kept: the key is free again, and what the attempt charged is refunded. */
  release(): void;
}

/**
 * Idempotency-Key (http/idempotency.ts): `begin` claims a key, or answers the stored answer, or refuses (422 another
 * request, 409 still running past the wait or not stored); `scope` runs a keyed request's work, so that the
 * credits it charges are noted on its claim.
 */
export interface IdempotencyPort {
  readonly maxResponseBytes: number;
  scope<T>(work: () => Promise<T>): Promise<T>;
  begin(request: IdempotentRequest): Promise<{ replay: StoredAnswer } | { claim: IdempotentClaim }>;
}

/**
 * When the server stops waiting for work in flight (system/lifecycle.ts): `follow` registers a callback
 * for that moment and answers a ticket that `unfollow` takes back, once. Not an AbortSignal: a request's
 * listener on a signal that outlives it kept every later request's objects through their scavenges
 * (kernel/slot-list.ts).
 */
export interface WorkStop {
  readonly stopped: boolean;
  /** The error to answer, once stopped. */
  readonly reason: unknown;
  follow(stop: (reason: unknown) => void): number;
  unfollow(ticket: number): void;
}
