import type Koa from 'koa';
import type { HttpPorts, RequestOutcome } from './ports.js';
import { statusOf } from './request-context.js';
import type { AppContext } from './types.js';

/**
 * The server span of each request (HttpPorts.tracing): started before the stages after it, which run inside it (their
 * spans are its children), ended when the response is over (a stream's after its last byte, or when its client
 * left), named and described then from what the request became: its operation, route, account, status and error
 * code. Off (no stage at all) without `HttpPorts.tracing`.
 */
export function requestTracing(ports: Pick<HttpPorts, 'tracing'>): readonly Koa.Middleware[] {
  const tracing = ports.tracing;
  if (!tracing) return [];
  return [
    (ctx: AppContext, next) => {
      const span = tracing.start(ctx.method, ctx.path, ctx.headers);
      ctx.state.traceId = span.traceId;
      ctx.res.once('close', () => span.end(outcomeOf(ctx)));
      return span.run(next);
    },
  ];
}

function outcomeOf(ctx: AppContext): RequestOutcome {
  const { state } = ctx;
  return {
    operationId: state.operationId,
    route: state.route,
    accountId: state.principal?.account.id,
    status: statusOf(ctx),
    errorCode: state.usage.errorCode,
  };
}
