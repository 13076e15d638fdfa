import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { CLIENT_CLOSED_REQUEST, STREAM_STALLED } from './call.js';
import type { HttpPorts } from './ports.js';
import type { AppContext, RequestState } from './types.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Request id, timing and a child logger. Keys are never logged: only the operation and status. */
export function requestContext(ports: Pick<HttpPorts, 'logger'>): Koa.Middleware {
  const logRequests = ports.logger.isLevelEnabled('debug');
  return async (ctx: AppContext, next) => {
    const given = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(given) ? given : `req_${randomUUID().replaceAll('-', '')}`;
    let log: Logger | undefined;
    const state: RequestState = {
      requestId,
      startedAt: performance.now(),
      // Made on first use: most requests log nothing, and a pino child per request is not free.
      get log() {
        log ??= ports.logger.child({ request_id: requestId });
        return log;
      },
      usage: { model: null, promptTokens: 0, completionTokens: 0, credits: 0, cached: false, clientClosed: false },
    };
    ctx.state = state;
    ctx.set('X-Request-Id', requestId);
    await next();
    if (logRequests) {
      state.log.debug(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: performance.now() - state.startedAt },
        'request',
      );
    }
  };
}

/** One usage row per authenticated request, whatever its outcome. */
export function usageRecorder(ports: Pick<HttpPorts, 'recordRequest' | 'clock'>): Koa.Middleware {
  return async (ctx: AppContext, next) => {
    await next();
    const { principal, usage, operationId, requestId, startedAt, streamDone } = ctx.state;
    if (!principal) return;
    const statusOf = () => {
      if (ctx.state.streamStalled) return STREAM_STALLED;
      return usage.clientClosed ? CLIENT_CLOSED_REQUEST : ctx.status;
    };
    const record = () =>
      ports.recordRequest({
        accountId: principal.account.id,
        keyId: principal.key.id,
        requestId,
        endpoint: operationId ?? ctx.path,
        model: usage.model,
        userId: usage.userId ?? null,
        status: statusOf(),
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        credits: usage.credits,
        latencyMs: performance.now() - startedAt,
        ...(usage.firstTokenAt !== undefined ? { ttftMs: usage.firstTokenAt - startedAt } : {}),
        ...(usage.failedStatus !== undefined ? { failedStatus: usage.failedStatus } : {}),
        cached: usage.cached,
        createdAt: ports.clock(),
      });
    if (!streamDone) return record();
    // A stream's tokens are known only at its end, after this middleware has returned.
    streamDone.then(record).catch((err: unknown) => ctx.state.log.error({ err }, 'recording stream usage failed'));
  };
}
