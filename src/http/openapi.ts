import addFormats from 'ajv-formats';
import { type Document, OpenAPIBackend, type Context as OpenApiContext } from 'openapi-backend';
import { AppError } from '../errors/index.js';
import { callOf } from './call.js';
import { loadContract } from './document.js';
import { IndexedOpenAPIRouter } from './indexed-router.js';
import { isMultipart } from './multipart.js';
import type { AnyReply, OperationId, OperationRequest, Operations } from './operation.js';
import type { HttpPorts } from './ports.js';
import { postSecurityHandler, refuseAmbiguousCredentials, securityHandlers, unauthorizedHandler } from './security.js';
import { cutWhenStalled } from './stream-deadline.js';
import type { AppContext } from './types.js';
import { validationError } from './validation-error.js';

/** openapi-backend over the contract with the server's ajv settings; the tests validate responses with it too. */
export function contractBackend(): OpenAPIBackend {
  return new OpenAPIBackend({
    definition: loadContract().forValidation() as unknown as Document,
    strict: true,
    quick: false,
    // openapi-backend validates every body against the JSON schema; a multipart upload's fields are
    // checked by its handler (call.upload) instead.
    validate: (c) => !isMultipart(c.request.headers),
    // verbose: errors carry their schema, so a wrong `role` can name the roles there are.
    ajvOpts: { allErrors: false, strict: false, discriminator: true, verbose: true },
    customizeAjv: (ajv) => {
      addFormats.default(ajv, ['email', 'date-time', 'date', 'int64']);
      return ajv;
    },
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
function writeReply(ctx: AppContext, reply: AnyReply, streamWriteTimeoutMs: number): void {
  ctx.status = reply.status;
  if (reply.headers) ctx.set(reply.headers);
  if ('stream' in reply) {
    ctx.type = reply.type;
    ctx.body = reply.stream;
    ctx.state.streamDone = reply.finished;
    cutWhenStalled(ctx.res, streamWriteTimeoutMs, () => {
      ctx.state.streamStalled = true;
      ctx.state.log.warn(
        { operation: ctx.state.operationId, stream_write_timeout_ms: streamWriteTimeoutMs },
        'cut a stream whose client stopped reading',
      );
    });
  } else if ('body' in reply) {
    if (reply.type) ctx.type = reply.type;
    ctx.body = reply.body;
  }
}

/** An operation as openapi-backend calls it: the validated request in, the reply written to Koa. */
function adapt(
  operation: (request: OperationRequest<OperationId>, call: ReturnType<typeof callOf>) => unknown,
  ports: Pick<HttpPorts, 'stopping' | 'streamWriteTimeoutMs'>,
) {
  return async (c: OpenApiContext, ctx: AppContext) => {
    const request = { body: c.request.requestBody, params: c.request.params, query: c.request.query };
    const reply = await operation(request as OperationRequest<OperationId>, callOf(ctx, ports.stopping));
    writeReply(ctx, reply as AnyReply, ports.streamWriteTimeoutMs);
  };
}

/**
 * The contract as router and validator: openapi-backend matches each request to an operation,
 * runs the security handlers, then (after the rate limiter in postSecurityHandler) validates
 * the request with ajv before the operation's handler runs. Refuses to start when an operation
 * of the document has no handler.
 */
export async function createOpenApi(operations: Operations, ports: HttpPorts): Promise<OpenAPIBackend> {
  const api = contractBackend();
  const handlers = Object.fromEntries(
    Object.entries(operations).map(([id, operation]) => [id, adapt(operation as Parameters<typeof adapt>[0], ports)]),
  );
  api.register({
    ...handlers,
    notFound: () => {
      throw new AppError('NOT_FOUND', 'No such endpoint');
    },
    methodNotAllowed: (c: OpenApiContext) => {
      const allowed = (api.router as IndexedOpenAPIRouter).allowedMethods(c.request.path);
      throw new AppError(
        'METHOD_NOT_ALLOWED',
        `${c.request.method.toUpperCase()} is not allowed here; allowed: ${allowed.join(', ')}`,
        { allowed },
        { Allow: allowed.join(', ') },
      );
    },
    validationFail: (c: OpenApiContext) => {
      throw validationError(c.validation.errors ?? []);
    },
    unauthorizedHandler: unauthorizedHandler(ports),
    postSecurityHandler: postSecurityHandler(ports),
    postRoutingHandler: (c: OpenApiContext, ctx: AppContext) => {
      ctx.state.operationId = c.operation?.operationId;
      // Before the security handlers: an ambiguous request is refused whichever of its keys would pass.
      if ((c.operation?.security ?? []).length > 0) refuseAmbiguousCredentials(ctx.req);
    },
    notImplemented: (c: OpenApiContext) => {
      throw new AppError('SERVICE_UNAVAILABLE', `${c.operation.operationId} is not implemented`);
    },
  });
  for (const [scheme, handler] of Object.entries(securityHandlers(ports))) {
    api.registerSecurityHandler(scheme, handler);
  }
  await api.init();
  const missing = api
    .getOperations()
    .map((op) => op.operationId)
    .filter((id): id is string => Boolean(id) && !(id && id in handlers));
  if (missing.length > 0) throw new Error(`operations without a handler: ${missing.join(', ')}`);
  useIndexedRouter(api);
  return api;
}
