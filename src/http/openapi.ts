import addFormats from 'ajv-formats';
import { type Document, OpenAPIBackend, type Context as OpenApiContext } from 'openapi-backend';
import { adminHandlers } from '../accounts/admin-handlers.js';
import { chatHandlers } from '../chat/handlers.js';
import { codeHandlers } from '../code/handlers.js';
import { AppError } from '../errors/index.js';
import { modelHandlers } from '../models/handlers.js';
import { usageHandlers } from '../usage/handlers.js';
import { loadContract } from './document.js';
import type { OperationHandlers } from './handler.js';
import { IndexedOpenAPIRouter } from './indexed-router.js';
import { postSecurityHandler, securityHandlers, unauthorizedHandler } from './security.js';
import type { Services } from './services.js';
import type { AppContext } from './state.js';
import { systemHandlers } from './system-handlers.js';
import { unavailableHandlers } from './unavailable-handlers.js';
import { validationError } from './validation-error.js';

/** Every operationId of the contract, mapped to its capability's handler. */
export function operationHandlers(services: Services): OperationHandlers {
  return {
    ...systemHandlers(services),
    ...modelHandlers(services),
    ...usageHandlers(services),
    ...chatHandlers(services),
    ...codeHandlers(services),
    ...adminHandlers(services),
    ...unavailableHandlers(services),
  };
}

/** openapi-backend over the contract with the server's ajv settings; the tests validate responses with it too. */
export function contractBackend(): OpenAPIBackend {
  return new OpenAPIBackend({
    definition: loadContract().forValidation() as unknown as Document,
    strict: true,
    quick: false,
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
 * The contract as router and validator: openapi-backend matches each request to an operation,
 * runs the security handlers, then (after the rate limiter in postSecurityHandler) validates
 * the request with ajv before the operation's handler runs.
 */
export async function createOpenApi(services: Services): Promise<OpenAPIBackend> {
  const handlers = operationHandlers(services);
  const api = contractBackend();
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
    unauthorizedHandler: unauthorizedHandler(services),
    postSecurityHandler: postSecurityHandler(services),
    postRoutingHandler: (c: OpenApiContext, ctx: AppContext) => {
      ctx.state.operationId = c.operation?.operationId;
    },
    notImplemented: (c: OpenApiContext) => {
      throw new AppError('SERVICE_UNAVAILABLE', `${c.operation.operationId} is not implemented`);
    },
  });
  for (const [scheme, handler] of Object.entries(securityHandlers(services))) {
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
