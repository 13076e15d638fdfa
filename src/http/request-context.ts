import type Koa from 'koa';
import type { Logger } from 'pino';
import { randomHex128 } from '../kernel/index.js';
import { CLIENT_CLOSED_REQUEST, STREAM_STALLED } from './call.js';
import type { HttpPorts, RequestRecord } from './ports.js';
import type { AppContext, RequestState, UsageNote } from './types.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * A request's state, its logger made on first use (most requests log nothing, and a pino child per request is
 * not free). A class, not an object literal with a getter: V8 defines a literal's accessor at run time on
 * every evaluation (~0.5 µs a request), a class's getter once on its prototype.
 */
class RequestStateRecord implements RequestState {
  readonly startedAt = performance.now();
  readonly usage = newUsageNote();
  traceId: string | undefined;
  #log: Logger | undefined;

  readonly #logger: Logger;

  constructor(
    readonly requestId: string,
    logger: Logger,
  ) {
    this.#logger = logger;
  }

  get log(): Logger {
    this.#log ??= this.#logger.child(
      this.traceId === undefined
        ? { request_id: this.requestId }
        : { request_id: this.requestId, trace_id: this.traceId },
    );
    return this.#log;
  }
}

/** A usage note before the handler fills it in (an HTTP request's, or a socket message's): nothing counted yet. */
export function newUsageNote(): UsageNote {
  return {
    model: null,
    promptTokens: 0,
    completionTokens: 0,
    credits: 0,
    cached: false,
    clientClosed: false,
  };
}

/** `req_` and 32 random hex digits (0.12 µs; a UUID cut around its dashes took 0.4-0.7 µs and five strings). */
export function newRequestId(): string {
  return `req_${randomHex128()}`;
}

/** Request id, timing and a child logger. Keys are never logged: only the operation and status. */
export function requestContext(ports: Pick<HttpPorts, 'logger'>): Koa.Middleware {
  const logRequests = ports.logger.isLevelEnabled('debug');
  return async (ctx: AppContext, next) => {
    const given = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(given) ? given : newRequestId();
    const state: RequestState = new RequestStateRecord(requestId, ports.logger);
    ctx.state = state;
    ctx.res.setHeader('X-Request-Id', requestId);
    await next();
    if (logRequests) {
      state.log.debug(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: performance.now() - state.startedAt },
        'request',
      );
    }
  };
}

/**
 * The end of every authenticated request, whatever its outcome: its record (usage, SLA, metrics) handed to the
 * product once, after the handler, or after the last byte of a stream.
 */
export function endOfRequest(ports: Pick<HttpPorts, 'endOfRequest' | 'clock'>): Koa.Middleware {
  return async (ctx: AppContext, next) => {
    await next();
    const { principal, streamDone } = ctx.state;
    if (!principal) return;
    if (!streamDone) return recordUsage(ctx, principal, ports);
    // A stream's tokens are known only at its end, after this middleware has returned.
    streamDone
      .then(() => recordUsage(ctx, principal, ports))
      .catch((err: unknown) => ctx.state.log.error({ err }, 'recording stream usage failed'));
  };
}

/** Module functions, not closures made per request: nearly every request comes through here. */
export function statusOf(ctx: AppContext): number {
  if (ctx.state.streamStalled) return STREAM_STALLED;
  return ctx.state.usage.clientClosed ? CLIENT_CLOSED_REQUEST : ctx.status;
}

function recordUsage(
  ctx: AppContext,
  principal: NonNullable<RequestState['principal']>,
  ports: Pick<HttpPorts, 'endOfRequest' | 'clock'>,
): Promise<void> | void {
  const { usage, operationId, requestId, startedAt } = ctx.state;
  const endpoint = operationId ?? ctx.path;
  return ports.endOfRequest(usageRow(principal, requestId, endpoint, usage, statusOf(ctx), startedAt, ports.clock()));
}

/** The usage row of a request (an HTTP request's, or a WebSocket message's: socket-session.ts). */
export function usageRow(
  principal: NonNullable<RequestState['principal']>,
  requestId: string,
  endpoint: string,
  usage: UsageNote,
  status: number,
  startedAt: number,
  createdAt: number,
): RequestRecord {
  // Optional fields set after, not spread in: a spread of a literal copies through a generic path.
  const row: RequestRecord = {
    accountId: principal.account.id,
    keyId: principal.key.id,
    requestId,
    endpoint,
    model: usage.model,
    userId: usage.userId ?? null,
    status,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    credits: usage.credits,
    latencyMs: performance.now() - startedAt,
    cached: usage.cached,
    createdAt,
  };
  if (usage.firstTokenAt !== undefined) row.ttftMs = usage.firstTokenAt - startedAt;
  if (usage.failedStatus !== undefined) row.failedStatus = usage.failedStatus;
  if (usage.errorCode !== undefined) row.errorCode = usage.errorCode;
  if (usage.content !== undefined) row.content = usage.content;
  return row;
}
