import type Koa from 'koa';
import type { Handler, OpenAPIBackend } from 'openapi-backend';
import { accessLog } from './access-log.js';
import { corsAndOptions } from './cors.js';
import { errorMiddleware } from './error-middleware.js';
import { idempotencyClaim, idempotencyScope } from './idempotency.js';
import type { IndexedOpenAPIRouter } from './indexed-router.js';
import { refuseUrlText, routeBodies } from './intake.js';
import {
  contractRequests,
  methodNotAllowed,
  noteOperation,
  notFound,
  notImplemented,
  operationHandlers,
} from './openapi.js';
import type { Operations } from './operation.js';
import { pathAliases } from './path-aliases.js';
import type { ExtraRoutes, HttpPorts } from './ports.js';
import { referenceAssets } from './reference-assets.js';
import { endOfRequest, requestContext } from './request-context.js';
import { requestTracing } from './request-tracing.js';
import { oneCredential, postSecurityHandler, securityHandlers, unauthorizedHandler } from './security.js';
import type { RequestState } from './types.js';
import { validationFail } from './validation-error.js';

/**
 * The way of one request through the service, every stage in the order it runs and the file that holds
 * it. Three hosts run them, one after the other:
 *
 * - `server`: Node's http server, before Koa sees a request; applied to the server by src/server.ts.
 * - `koa`: Koa's middleware chain; `createApp` (app.ts) mounts these, in this order. Each wraps the ones
 *   after it: the usage row and the error mapping see what every later stage did or threw.
 * - `contract`: openapi-backend's `handleRequest` (the last Koa stage) calls its hooks in this order;
 *   `createOpenApi` (app.ts) registers them. Two stages on one hook run in the order listed.
 *
 * Nothing here decides anything: each stage is its file's. The product's decisions (who the key belongs
 * to, whether the account has room, what the operation answers) come through HttpPorts.
 */
export type Stage = ServerStage | KoaStage | ContractStage;

interface StageInfo {
  /** What the stage does, in a few words. */
  readonly name: string;
  /** The file (under src/) that holds it. */
  readonly file: string;
  /** What of `file` the stage runs: the functions its mount, hooks or security call, or what server.ts applies. */
  readonly symbols: readonly string[];
}

interface ServerStage extends StageInfo {
  readonly runs: 'server';
}

interface KoaStage extends StageInfo {
  readonly runs: 'koa';
  mount(ports: HttpPorts, api: OpenAPIBackend): Koa.Middleware<RequestState> | readonly Koa.Middleware<RequestState>[];
}

/** openapi-backend's hooks the pipeline uses, in the order handleRequest calls them. */
type ContractHook =
  | 'postRoutingHandler'
  | 'notFound'
  | 'methodNotAllowed'
  | 'postSecurityHandler'
  | 'unauthorizedHandler'
  | 'validationFail'
  | 'notImplemented';

export interface ContractDeps {
  api: OpenAPIBackend;
  ports: HttpPorts;
  operations: Operations;
}

interface ContractStage extends StageInfo {
  readonly runs: 'contract';
  /** Handlers by hook name, or by operationId (the operations themselves). */
  hooks?(deps: ContractDeps): Partial<Record<ContractHook, Handler>> | Record<string, Handler>;
  /** openapi-backend's security handlers, one per scheme of the document. */
  security?(deps: ContractDeps): Record<string, Handler>;
}

/** Routes outside the contract (the dashboard), each answering the paths under its prefix. */
function extraRoutes(routes: readonly ExtraRoutes[]): Koa.Middleware[] {
  return routes.map((extra) => {
    const matches = (path: string) => path === extra.prefix || path.startsWith(`${extra.prefix}/`);
    return (ctx, next) => (matches(ctx.path) ? extra.middleware(ctx, next) : next());
  });
}

export const REQUEST_PIPELINE: readonly Stage[] = [
  // Before Koa: a connection over the caps is answered 503 before its request is read; deadlines, headers
  // too large, HTTP that does not parse and CONNECT are answered with the error body on the socket.
  { runs: 'server', name: 'connection caps', file: 'http/connection-limits.ts', symbols: ['ConnectionLimits'] },
  {
    runs: 'server',
    name: 'header, request and keep-alive deadlines',
    file: 'http/timeouts.ts',
    symbols: ['applyServerTimeouts'],
  },
  // A WebSocket upgrade (HttpPorts.upgrades) leaves here: handshake, one credential, the key (401), then its
  // socket's messages, each admitted, validated, answered and recorded as a request (http/socket-session.ts).
  {
    runs: 'server',
    name: 'WebSocket upgrades (HttpPorts.upgrades)',
    file: 'http/upgrade.ts',
    symbols: ['upgradeRequests'],
  },

  {
    runs: 'koa',
    name: 'request id, timing, logger',
    file: 'http/request-context.ts',
    symbols: ['requestContext'],
    mount: requestContext,
  },
  {
    runs: 'koa',
    name: 'server span (HttpPorts.tracing): continues an incoming traceparent; ended when the response is over',
    file: 'http/request-tracing.ts',
    symbols: ['requestTracing'],
    mount: requestTracing,
  },
  {
    runs: 'koa',
    name: 'access log (HttpPorts.accessLog): a JSON line per request, when its response is over',
    file: 'http/access-log.ts',
    symbols: ['accessLog'],
    mount: accessLog,
  },
  {
    runs: 'koa',
    name: 'end of request (HttpPorts.endOfRequest): usage row, SLA bucket, metrics, for authenticated requests',
    file: 'http/request-context.ts',
    symbols: ['endOfRequest'],
    mount: endOfRequest,
  },
  {
    runs: 'koa',
    name: 'errors to the error body',
    file: 'http/error-middleware.ts',
    symbols: ['errorMiddleware'],
    mount: (ports) => errorMiddleware(ports.bodyLimitBytes),
  },
  {
    runs: 'koa',
    name: 'other prefixes of the same paths (HttpPorts.pathAliases)',
    file: 'http/path-aliases.ts',
    symbols: ['pathAliases'],
    mount: (ports) => pathAliases(ports.pathAliases ?? []),
  },
  {
    runs: 'koa',
    name: 'routes outside the contract (HttpPorts.extraRoutes)',
    file: 'http/pipeline.ts',
    symbols: ['extraRoutes'],
    mount: (ports) => extraRoutes(ports.extraRoutes ?? []),
  },
  {
    runs: 'koa',
    name: 'CORS and OPTIONS',
    file: 'http/cors.ts',
    symbols: ['corsAndOptions'],
    mount: (ports, api) =>
      corsAndOptions(ports.corsOrigins, (path) => (api.router as IndexedOpenAPIRouter).allowedMethods(path)),
  },
  {
    runs: 'koa',
    name: "the reference page's assets",
    file: 'http/reference-assets.ts',
    symbols: ['referenceAssets'],
    mount: referenceAssets,
  },
  { runs: 'koa', name: 'URL text', file: 'http/intake.ts', symbols: ['refuseUrlText'], mount: () => refuseUrlText },
  {
    runs: 'koa',
    name: "body: the route's reader and limit, coding, pause, JSON depth and text",
    file: 'http/intake.ts',
    symbols: ['routeBodies'],
    mount: (ports, api) => routeBodies(api, ports),
  },
  {
    runs: 'koa',
    name: "Idempotency-Key (HttpPorts.idempotency): a keyed POST's scope, and the end of a replay",
    file: 'http/idempotency.ts',
    symbols: ['idempotencyScope'],
    mount: idempotencyScope,
  },
  {
    runs: 'koa',
    name: 'the contract (openapi-backend)',
    file: 'http/openapi.ts',
    symbols: ['contractRequests'],
    mount: (_, api) => contractRequests(api),
  },

  {
    runs: 'contract',
    name: 'routing: the operation, or 404 / 405',
    file: 'http/openapi.ts',
    symbols: ['noteOperation', 'notFound', 'methodNotAllowed'],
    hooks: ({ api }) => ({ postRoutingHandler: noteOperation, notFound, methodNotAllowed: methodNotAllowed(api) }),
  },
  {
    runs: 'contract',
    name: 'one credential per request',
    file: 'http/security.ts',
    symbols: ['oneCredential'],
    hooks: () => ({ postRoutingHandler: oneCredential }),
  },
  {
    runs: 'contract',
    name: 'authentication (HttpPorts.authenticate)',
    file: 'http/security.ts',
    symbols: ['securityHandlers'],
    security: ({ ports }) => securityHandlers(ports),
  },
  {
    runs: 'contract',
    name: 'Idempotency-Key (HttpPorts.idempotency): the claim, a replay, the answer captured',
    file: 'http/idempotency.ts',
    symbols: ['idempotencyClaim'],
    hooks: ({ ports }) => ({ postSecurityHandler: idempotencyClaim(ports) }),
  },
  {
    runs: 'contract',
    name: 'rate limit (HttpPorts.admit): its headers, or its refusal',
    file: 'http/security.ts',
    symbols: ['postSecurityHandler'],
    hooks: ({ ports }) => ({ postSecurityHandler: postSecurityHandler(ports) }),
  },
  {
    runs: 'contract',
    name: 'refused credentials: 401, or the refusal of HttpPorts.authenticationFailed',
    file: 'http/security.ts',
    symbols: ['unauthorizedHandler'],
    hooks: ({ ports }) => ({ unauthorizedHandler: unauthorizedHandler(ports) }),
  },
  {
    runs: 'contract',
    name: 'validation',
    file: 'http/validation-error.ts',
    symbols: ['validationFail'],
    hooks: () => ({ validationFail }),
  },
  {
    runs: 'contract',
    name: 'the handler, and its reply written',
    file: 'http/openapi.ts',
    symbols: ['operationHandlers', 'notImplemented'],
    hooks: ({ ports, operations }) => ({ ...operationHandlers(operations, ports), notImplemented }),
  },
];
