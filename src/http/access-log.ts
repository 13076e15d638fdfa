import type Koa from 'koa';
import type { Logger } from 'pino';
import type { HttpPorts } from './ports.js';
import { statusOf } from './request-context.js';
import type { AppContext } from './types.js';

/** W3C Trace Context: version, 32-hex trace id, 16-hex parent id, flags; an all-zero trace id is invalid. */
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/** The trace id of a valid `traceparent` header, else undefined. */
export function traceIdOf(header: string | undefined): string | undefined {
  const match = header === undefined ? null : TRACEPARENT.exec(header.trim().toLowerCase());
  const id = match?.[1];
  return id === undefined || /^0+$/.test(id) ? undefined : id;
}

/**
 * The access log: one JSON line per request that reaches Koa, authenticated or not, refused or answered, written
 * when its response is over (a stream's after its last byte, or when its client left): the path without its query
 * string (where secrets travel), the status as the usage row has it (499 client gone), the bytes the socket was
 * handed for it (status line and headers included), who made it and what it asked for, and the trace id: the
 * request's server span's when tracing is on, else an incoming `traceparent`'s. Off (nothing per request) without
 * `HttpPorts.accessLog` or below its `info` level.
 */
export function accessLog(ports: Pick<HttpPorts, 'accessLog'>): Koa.Middleware {
  const log = ports.accessLog;
  if (!log?.isLevelEnabled('info')) return (_ctx, next) => next();
  return async (ctx: AppContext, next) => {
    const socket = ctx.req.socket;
    const bytesBefore = socket.bytesWritten;
    ctx.res.once('close', () => writeLine(log, ctx, socket.bytesWritten - bytesBefore));
    await next();
  };
}

/** A module function, not a closure per request: every request comes here. */
function writeLine(log: Logger, ctx: AppContext, bytes: number): void {
  const { state } = ctx;
  const principal = state.principal;
  const usage = state.usage;
  const line: Record<string, unknown> = {
    type: 'access',
    request_id: state.requestId,
    method: ctx.method,
    path: ctx.path,
    status: statusOf(ctx),
    latency_ms: Math.round(performance.now() - state.startedAt),
    bytes,
    account_id: principal?.account.id ?? null,
    key_id: principal?.key.id ?? null,
    user_id: usage.userId ?? null,
    model: usage.model,
    error_code: usage.errorCode ?? null,
  };
  if (usage.failedStatus !== undefined) line.failed_status = usage.failedStatus;
  const traceId = state.traceId ?? traceIdOf(ctx.get('traceparent') || undefined);
  if (traceId) line.trace_id = traceId;
  log.info(line, 'request');
}
