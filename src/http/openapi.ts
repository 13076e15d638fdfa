import type { Readable } from 'node:stream';
import type Koa from 'koa';
import {
  type Document,
  type Handler,
  OpenAPIBackend,
  type Context as OpenApiContext,
  type Request,
} from 'openapi-backend';
import { AppError } from '../errors/index.js';
import { bodyOf } from './body.js';
import { callOf } from './call.js';
import { CONTRACT_AJV } from './compiled-contract.js';
import { loadContract } from './document.js';
import { setHeaders } from './headers.js';
import { IndexedOpenAPIRouter } from './indexed-router.js';
import { jsonStream } from './json-stream.js';
import { acceptsMultipart, isMultipart } from './multipart.js';
import type { AnyReply, OperationId, OperationRequest, Operations } from './operation.js';
import type { HttpPorts } from './ports.js';
import { cutWhenStalled } from './stream-deadline.js';
import type { AppContext } from './types.js';

/**
 * openapi-backend over the contract with the server's ajv settings. `lazy`: the document's own check and the
 * precompilation of every validator are skipped, and only the validators used are compiled. The server starts
 * lazy and then takes the process's compiled contract (compiled-contract.ts); the CLI, checking one operation's
 * input, compiles just that one's validators — the same rules, in 0.2 s.
 */
export function contractBackend(o: { lazy?: boolean } = {}): OpenAPIBackend {
  return new OpenAPIBackend({
    definition: loadContract().forValidation() as unknown as Document,
    strict: true,
    quick: o.lazy === true,
    coerceTypes: true,
    // openapi-backend validates every body against the JSON schema; a multipart upload's fields are
    // checked by its handler (call.upload) instead. Only where the operation takes one: a multipart header with
    // no body on a JSON route is validated (400, the body is required), never handed to its handler unread.
    validate: (c) =>
      !(isMultipart(c.request.headers) && acceptsMultipart(c.operation as unknown as Record<string, unknown>)),
    ...CONTRACT_AJV,
  });
}

/** After init(): routes with the indexed router (see IndexedOpenAPIRouter), for matching and validation alike. */
export function useIndexedRouter(api: OpenAPIBackend): void {
  const router = new IndexedOpenAPIRouter({ definition: api.definition, apiRoot: '/' });
  api.router = router;
  if (api.validator) api.validator.router = router;
}

/**
 * Writes a handler's reply: status, headers, and a body, a typed text or a stream. A stream whose client
 * stops reading for `streamWriteTimeoutMs` is cut (stream-deadline.ts), and its usage row says so.
 */
async function writeReply(ctx: AppContext, reply: AnyReply, streamWriteTimeoutMs: number): Promise<void> {
  if ('streamed' in reply) {
    // Before the status is set: a failure while the first piece is read is still an ordinary error answer.
    const stream = await jsonStream(reply.streamed);
    ctx.status = reply.status;
    if (reply.headers) setHeaders(ctx, reply.headers);
    ctx.type = 'application/json';
    sendStream(ctx, stream, jsonStreamDone(ctx, stream), streamWriteTimeoutMs);
    return;
  }
  ctx.status = reply.status;
  if (reply.headers) setHeaders(ctx, reply.headers);
  if ('stream' in reply) {
    ctx.type = reply.type;
    sendStream(ctx, reply.stream, reply.finished, streamWriteTimeoutMs);
  } else if ('body' in reply) {
    if (reply.type) {
      ctx.type = reply.type;
      ctx.body = reply.body;
    } else if (isJsonValue(reply.body)) {
      // A JSON body's type set as Koa would set it, without Koa's media-type lookup and header tuple per
      // answer; the body serialised as Koa would, into bytes: Node then writes the head and the body in one
      // writev, where Koa's string would be joined to the head and the pair copied into one string first
      // (~1.4 KB a chat answer in bench:chat's heap profile).
      ctx.res.setHeader('Content-Type', JSON_TYPE);
      ctx.body = Buffer.from(JSON.stringify(reply.body));
    } else ctx.body = reply.body;
  }
}

/** What Koa's `ctx.type = 'json'` sets (mime-types' `contentType('json')`). */
const JSON_TYPE = 'application/json; charset=utf-8';

/** A body Koa answers as JSON: an object or array that is not a Buffer or a stream. */
function isJsonValue(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    !Buffer.isBuffer(body) &&
    typeof (body as { pipe?: unknown }).pipe !== 'function'
  );
}

/** A stream as the body; the usage row waits for `finished`. */
function sendStream(ctx: AppContext, stream: Readable, finished: Promise<void>, streamWriteTimeoutMs: number): void {
  ctx.body = stream;
  ctx.state.streamDone = finished;
  cutWhenStalled(ctx.res, streamWriteTimeoutMs, () => {
    ctx.state.streamStalled = true;
    ctx.state.log.warn(
      { operation: ctx.state.operationId, stream_write_timeout_ms: streamWriteTimeoutMs },
      'cut a stream whose client stopped reading',
    );
  });
}

/**
 * Settles when a streamed JSON body's response is over. A failure after its status line went out cannot be
 * answered any more: the connection is cut, so the client gets a truncated body (no final chunk), never one
 * that parses, and the usage row records the 500 the client could not be told.
 */
function jsonStreamDone(ctx: AppContext, stream: Readable): Promise<void> {
  let failed = false;
  stream.once('error', (err) => {
    failed = true;
    ctx.state.usage.failedStatus = 500;
    ctx.state.usage.errorCode = 'INTERNAL_ERROR';
    ctx.state.log.error(
      { err, operation: ctx.state.operationId },
      'a streamed JSON body failed; the connection was cut',
    );
    ctx.res.destroy();
  });
  return new Promise((resolve) => {
    ctx.res.once('close', () => {
      if (!failed && !ctx.res.writableFinished) ctx.state.usage.clientClosed = true;
      resolve();
    });
  });
}

/** An operation as openapi-backend calls it: the validated request in, the reply written to Koa. */
function adapt(
  operation: (request: OperationRequest<OperationId>, call: ReturnType<typeof callOf>) => unknown,
  ports: Pick<HttpPorts, 'stopping' | 'streamWriteTimeoutMs'>,
) {
  return async (c: OpenApiContext, ctx: AppContext) => {
    ctx.state.executing = true;
    const request = {
      body: c.request.requestBody,
      params: c.request.params,
      query: c.request.query,
      headers: c.request.headers,
    };
    const reply = await operation(request as OperationRequest<OperationId>, callOf(ctx, ports.stopping));
    await writeReply(ctx, reply as AnyReply, ports.streamWriteTimeoutMs);
  };
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

/** The Koa middleware that hands a request to openapi-backend, which runs the contract's hooks on it. */
export function contractRequests(api: OpenAPIBackend): Koa.Middleware {
  return async (ctx: AppContext) => {
    await api.handleRequest(openApiRequest(ctx), ctx);
  };
}

/** No operation of the contract at this path: 404. */
export function notFound(): never {
  throw new AppError('NOT_FOUND', 'No such endpoint');
}

/** The path is the contract's, the method is not: 405 with `Allow`. */
export function methodNotAllowed(api: OpenAPIBackend) {
  return (c: OpenApiContext): never => {
    const allowed = (api.router as IndexedOpenAPIRouter).allowedMethods(c.request.path);
    throw new AppError(
      'METHOD_NOT_ALLOWED',
      `${c.request.method.toUpperCase()} is not allowed here; allowed: ${allowed.join(', ')}`,
      { allowed },
      { Allow: allowed.join(', ') },
    );
  };
}

/** The operation, noted for the usage row and the logs (runs whether or not routing found one). */
export function noteOperation(c: OpenApiContext, ctx: AppContext): void {
  ctx.state.operationId = c.operation?.operationId;
  ctx.state.route = c.operation?.path;
}

/** Every operation's handler, as openapi-backend calls it by operationId. */
export function operationHandlers(
  operations: Operations,
  ports: Pick<HttpPorts, 'stopping' | 'streamWriteTimeoutMs'>,
): Record<string, Handler> {
  return Object.fromEntries(
    Object.entries(operations).map(([id, operation]) => [id, adapt(operation as Parameters<typeof adapt>[0], ports)]),
  );
}

/** An operation of the document without a handler (the server refuses to start with one; kept as a guard). */
export function notImplemented(c: OpenApiContext): never {
  throw new AppError('SERVICE_UNAVAILABLE', `${c.operation.operationId} is not implemented`);
}
