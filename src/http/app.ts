import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { bodyParser } from '@koa/bodyparser';
import Koa from 'koa';
import Router from 'koa-router';
import type { OpenAPIBackend, Request } from 'openapi-backend';
import type { Logger } from 'pino';
import { AppError } from '../errors/index.js';
import { CLIENT_CLOSED_REQUEST } from './call.js';
import { errorMiddleware } from './error-middleware.js';
import { isMultipart, readMultipart } from './multipart.js';
import type { HttpPorts } from './ports.js';
import type { AppContext, RequestState } from './state.js';

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
    const record = () =>
      ports.recordRequest({
        accountId: principal.account.id,
        keyId: principal.key.id,
        requestId,
        endpoint: operationId ?? ctx.path,
        model: usage.model,
        status: usage.clientClosed ? CLIENT_CLOSED_REQUEST : ctx.status,
        promptTokens: usage.promptTokens,
        completionTokens: usage.completionTokens,
        credits: usage.credits,
        latencyMs: performance.now() - startedAt,
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

/**
 * A body on a JSON API must be JSON, or multipart/form-data where the contract says so (read here,
 * within the route's limit, into `state.upload`); anything else is 415 rather than silently ignored.
 */
const requireJsonBody =
  (api: OpenAPIBackend, globalLimit: number): Koa.Middleware =>
  async (ctx: AppContext, next) => {
    const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (BODY_METHODS.has(ctx.method) && hasBody && isMultipart(ctx.headers)) {
      const operation = operationOf(api, ctx);
      if (acceptsMultipart(operation)) {
        const routeLimit = operation?.['x-body-limit-bytes'];
        ctx.state.upload = await readMultipart(ctx, typeof routeLimit === 'number' ? routeLimit : globalLimit);
        // The stream is consumed: the JSON body parser must not try to read it again.
        (ctx as { disableBodyParser?: boolean }).disableBodyParser = true;
        return next();
      }
    }
    if (BODY_METHODS.has(ctx.method) && hasBody && !ctx.is('application/json')) {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json', {
        content_type: ctx.get('content-type') || null,
      });
    }
    await next();
  };

/**
 * The JSON body parser with the limit the contract states for the route (`x-body-limit-bytes` on the
 * operation, e.g. document upload), or the global limit. The route is matched before the body is read,
 * so a large body is refused at the limit of its own route, not buffered first.
 */
function routeBodyParser(api: OpenAPIBackend, globalLimit: number): Koa.Middleware {
  const parsers = new Map<number, Koa.Middleware>();
  const parserFor = (limit: number) => {
    let parser = parsers.get(limit);
    if (!parser) {
      parser = bodyParser({ enableTypes: ['json'], jsonLimit: limit, encoding: 'utf-8' }) as Koa.Middleware;
      parsers.set(limit, parser);
    }
    return parser;
  };
  return (ctx, next) => {
    let limit = globalLimit;
    if (BODY_METHODS.has(ctx.method)) {
      const routeLimit = operationOf(api, ctx)?.['x-body-limit-bytes'];
      if (typeof routeLimit === 'number') limit = routeLimit;
    }
    return parserFor(limit)(ctx, next);
  };
}

export function createApp(ports: HttpPorts, api: OpenAPIBackend): Koa<RequestState> {
  const app = new Koa<RequestState>({ proxy: false });
  const limit = ports.bodyLimitBytes;
  app.silent = true;
  app.use(requestContext(ports));
  app.use(usageRecorder(ports));
  app.use(errorMiddleware(limit));
  // Only the reference page's assets go through koa-router: matching its routes for every API request
  // would be work for nothing.
  const assets = referenceAssets().routes() as unknown as Koa.Middleware<RequestState>;
  app.use((ctx, next) => (ctx.path.startsWith('/docs/assets/') ? assets(ctx, next) : next()));
  app.use(requireJsonBody(api, limit));
  app.use(routeBodyParser(api, limit));
  app.use(async (ctx: AppContext) => {
    await api.handleRequest(openApiRequest(ctx), ctx);
  });
  return app;
}

/** The request as openapi-backend reads it, after the body parser; an empty body is no body. */
export function openApiRequest(ctx: Koa.Context): Request {
  const raw = (ctx.request as { rawBody?: string }).rawBody;
  return {
    method: ctx.method,
    path: ctx.path,
    query: ctx.querystring,
    headers: ctx.headers as Record<string, string | string[]>,
    body: raw === undefined || raw === '' ? undefined : ctx.request.body,
  };
}
