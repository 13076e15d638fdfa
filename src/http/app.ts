import Koa from 'koa';
import type { Handler, OpenAPIBackend } from 'openapi-backend';
import { useCompiledContract } from './compiled-contract.js';
import { contractBackend } from './openapi.js';
import type { Operations } from './operation.js';
import { type ContractDeps, REQUEST_PIPELINE } from './pipeline.js';
import type { HttpPorts } from './ports.js';
import type { RequestState } from './types.js';

/**
 * Handlers that share a hook, run one after the other in the pipeline's order. Synchronous ones (routing's
 * note, the one-credential check) run without a promise: the hook is awaited only from the first handler
 * that returns one.
 */
function inOrder(handlers: readonly Handler[]): Handler {
  const [only] = handlers;
  if (only && handlers.length === 1) return only;
  const rest = async (from: number, pending: unknown, args: Parameters<Handler>) => {
    await pending;
    for (let i = from; i < handlers.length; i++) await (handlers[i] as Handler)(...args);
  };
  return (...args) => {
    for (let i = 0; i < handlers.length; i++) {
      const result: unknown = (handlers[i] as Handler)(...args);
      if (result instanceof Promise) return rest(i + 1, result, args);
    }
    return undefined;
  };
}

/**
 * The contract as router and validator, with the pipeline's contract stages registered on it:
 * openapi-backend matches each request to an operation, runs the security handlers, then (after the rate
 * limiter in postSecurityHandler) validates the request with ajv before the operation's handler runs.
 * Refuses to start when an operation of the document has no handler.
 */
export async function createOpenApi(operations: Operations, ports: HttpPorts): Promise<OpenAPIBackend> {
  // Lazy: the routing and validation come from the process's compiled contract once init() has run.
  const api = contractBackend({ lazy: true });
  const deps: ContractDeps = { api, ports, operations };
  const hooks = new Map<string, Handler[]>();
  for (const stage of REQUEST_PIPELINE) {
    if (stage.runs !== 'contract') continue;
    for (const [hook, handler] of Object.entries(stage.hooks?.(deps) ?? {})) {
      if (handler) hooks.set(hook, [...(hooks.get(hook) ?? []), handler]);
    }
    for (const [scheme, handler] of Object.entries(stage.security?.(deps) ?? {})) {
      api.registerSecurityHandler(scheme, handler);
    }
  }
  for (const [hook, handlers] of hooks) api.register(hook, inOrder(handlers));
  await api.init();
  await useCompiledContract(api);
  const missing = api
    .getOperations()
    .map((op) => op.operationId)
    .filter((id): id is string => Boolean(id) && !(id && hooks.has(id)));
  if (missing.length > 0) throw new Error(`operations without a handler: ${missing.join(', ')}`);
  return api;
}

/** The Koa app: the pipeline's Koa stages, mounted in its order (pipeline.ts). */
export function createApp(ports: HttpPorts, api: OpenAPIBackend): Koa<RequestState> {
  const app = new Koa<RequestState>({ proxy: false });
  app.silent = true;
  for (const stage of REQUEST_PIPELINE) {
    if (stage.runs !== 'koa') continue;
    const mounted = stage.mount(ports, api);
    for (const middleware of Array.isArray(mounted) ? mounted : [mounted]) app.use(middleware);
  }
  return app;
}
