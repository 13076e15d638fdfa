/**
 * A request's intake before the contract sees it: the URL's text, then the body, read by the reader its
 * route calls for within its route's limit.
 */
import type Koa from 'koa';
import type { OpenAPIBackend } from 'openapi-backend';
import { jsonBody } from './body.js';
import { acceptsMultipart, isMultipart, readMultipart } from './multipart.js';
import { streamedMultipart } from './multipart-stream.js';
import type { HttpPorts } from './ports.js';
import { invalidText, urlTextProblem } from './text.js';
import { answeredBeforeItsBody } from './timeouts.js';
import type { AppContext } from './types.js';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

/** Percent-escapes in the path and query that do not stand for UTF-8 text without NUL: 400 `INVALID_TEXT`. */
export const refuseUrlText: Koa.Middleware = (ctx, next) => {
  const problem = urlTextProblem(ctx.path, ctx.querystring);
  if (!problem) return next();
  if (BODY_METHODS.has(ctx.method)) answeredBeforeItsBody(ctx.req);
  throw invalidText(problem);
};

/** The contract's operation for a request (before its body is read), if any. */
function operationOf(api: OpenAPIBackend, ctx: Koa.Context): Record<string, unknown> | undefined {
  return api.router.matchOperation({ method: ctx.method, path: ctx.path, headers: {} }) as unknown as
    | Record<string, unknown>
    | undefined;
}

/** Whether the operation's request body may be multipart/form-data (e.g. a document upload). */
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
export function routeBodies(
  api: OpenAPIBackend,
  ports: Pick<HttpPorts, 'bodyLimitBytes' | 'maxJsonDepth' | 'bodyIdleTimeoutMs'>,
): Koa.Middleware {
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
    // No operation for this method and path: the answer is 404 or 405, whatever the body's type; it is dropped.
    if (!operation && !ctx.is('application/json')) {
      answeredBeforeItsBody(ctx.req);
      return next();
    }
    const streamed = operation?.['x-upload'] === 'stream';
    const multipart = isMultipart(ctx.headers) && acceptsMultipart(operation);
    // A streamed upload's limit is for its file; any other body to its route is held to the global one.
    const limit = streamed && !multipart ? ports.bodyLimitBytes : routeLimit(operation, ports.bodyLimitBytes);
    if (multipart) {
      // `x-upload: stream`: the handler reads the body after authentication and admission, as it arrives.
      if (streamed) {
        ctx.state.streamedUpload = streamedMultipart(ctx);
        return next();
      }
      ctx.state.upload = await readMultipart(ctx, limit);
      return next();
    }
    return readerFor(limit)(ctx, next);
  };
}
