import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import Koa from 'koa';
import Router from 'koa-router';
import type { OpenAPIBackend, Request } from 'openapi-backend';
import type { Logger } from 'pino';
import { bodyOf, jsonBody } from './body.js';
import { CLIENT_CLOSED_REQUEST, STREAM_STALLED } from './call.js';
import { corsAndOptions } from './cors.js';
import { errorMiddleware } from './error-middleware.js';
import type { IndexedOpenAPIRouter } from './indexed-router.js';
import { isMultipart, readMultipart } from './multipart.js';
import type { HttpPorts } from './ports.js';
import { invalidText, urlTextProblem } from './text.js';
import { answeredBeforeItsBody } from './timeouts.js';
import type { AppContext, RequestState } from './types.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** The reference page's two static files, from the swagger-ui-dist package (no CDN). */
function referenceAssets(): Router {
  const dir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const files = {
    'swagger-ui.css': 'text/css',
    'swagger-ui-bundle.js': 'application/javascript',
  } as const;
  const router = new Router();
  for (const [name, type] of Object.entries(files)) {
    const body = readFileSync(join(dir, name));
    router.get(`/docs/assets/${name}`, (ctx) => {
      ctx.type = type;
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = body;
    });
  }
  return router;
}

/** Request id, timing and a child logger. Keys are never logged: only the operation and status. */
function requestContext(ports: HttpPorts): Koa.Middleware {
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
function usageRecorder(ports: HttpPorts): Koa.Middleware {
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

/** The contract's operation for a request (before its body is read), if any. */
function operationOf(api: OpenAPIBackend, ctx: Koa.Context): Record<string, unknown> | undefined {
  return api.router.matchOperation({ method: ctx.method, path: ctx.path, headers: {} }) as unknown as
    | Record<string, unknown>
    | undefined;
}

/** Whether the operation's request body may be multipart/form-data (e.g. a document upload). */
function acceptsMultipart(operation: Record<string, unknown> | undefined): boolean {
  const content = (operation?.requestBody as { content?: Record<string, unknown> } | undefined)?.content;
  return content !== undefined && 'multipart/form-data' in content;
}

/** The body limit the contract states for the route (`x-body-limit-bytes`, e.g. document upload), or the global one. */
function routeLimit(operation: Record<string, unknown> | undefined, globalLimit: number): number {
  const limit = operation?.['x-body-limit-bytes'];
  return typeof limit === 'number' ? limit : globalLimit;
}

/**
 * Bodies where they enter: multipart/form-data only where the contract accepts it (read into
 * `state.upload` within the route's limit); every other body through the JSON reader (jsonBody), with
 * the route's limit. The route is matched before the body is read, so a large body is refused at the
 * limit of its own route, not buffered first.
 */
function routeBodies(api: OpenAPIBackend, ports: HttpPorts): Koa.Middleware {
  const readers = new Map<number, Koa.Middleware>();
  const readerFor = (limitBytes: number) => {
    let reader = readers.get(limitBytes);
    if (!reader) {
      reader = jsonBody({ limitBytes, maxDepth: ports.maxJsonDepth, idleTimeoutMs: ports.bodyIdleTimeoutMs });
      readers.set(limitBytes, reader);
    }
    return reader;
  };
  return async (ctx: AppContext, next) => {
    if (!BODY_METHODS.has(ctx.method)) return readerFor(ports.bodyLimitBytes)(ctx, next);
    const operation = operationOf(api, ctx);
    const limit = routeLimit(operation, ports.bodyLimitBytes);
    if (isMultipart(ctx.headers) && acceptsMultipart(operation)) {
      ctx.state.upload = await readMultipart(ctx, limit);
      return next();
    }
    return readerFor(limit)(ctx, next);
  };
}

/** Percent-escapes in the path and query that do not stand for UTF-8 text without NUL: 400 `INVALID_TEXT`. */
const refuseUrlText: Koa.Middleware = (ctx, next) => {
  const problem = urlTextProblem(ctx.path, ctx.querystring);
  if (!problem) return next();
  if (BODY_METHODS.has(ctx.method)) answeredBeforeItsBody(ctx.req);
  throw invalidText(problem);
};

export function createApp(ports: HttpPorts, api: OpenAPIBackend): Koa<RequestState> {
  const app = new Koa<RequestState>({ proxy: false });
  const limit = ports.bodyLimitBytes;
  app.silent = true;
  app.use(requestContext(ports));
  app.use(usageRecorder(ports));
  app.use(errorMiddleware(limit));
  for (const extra of ports.extraRoutes ?? []) {
    const matches = (path: string) => path === extra.prefix || path.startsWith(`${extra.prefix}/`);
    app.use((ctx, next) => (matches(ctx.path) ? extra.middleware(ctx, next) : next()));
  }
  const router = api.router as IndexedOpenAPIRouter;
  app.use(corsAndOptions(ports.corsOrigins, (path) => router.allowedMethods(path)));
  // Only the reference page's assets go through koa-router: matching its routes for every API request
  // would be work for nothing.
  const assets = referenceAssets().routes() as unknown as Koa.Middleware<RequestState>;
  app.use((ctx, next) => (ctx.path.startsWith('/docs/assets/') ? assets(ctx, next) : next()));
  app.use(refuseUrlText);
  app.use(routeBodies(api, ports));
  app.use(async (ctx: AppContext) => {
    await api.handleRequest(openApiRequest(ctx), ctx);
  });
  return app;
}

/**
 * The request as openapi-backend reads it, after the body reader; an empty body is no body. HEAD is
 * routed as GET: Koa then sends GET's status and headers without the body (RFC 9110 §9.3.2).
 */
export function openApiRequest(ctx: AppContext): Request {
  return {
    method: ctx.method === 'HEAD' ? 'GET' : ctx.method,
    path: ctx.path,
    query: ctx.querystring,
    headers: ctx.headers as Record<string, string | string[]>,
    body: bodyOf(ctx),
  };
}
