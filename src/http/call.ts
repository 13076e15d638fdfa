import type { Context as OpenApiContext } from 'openapi-backend';
import { AppError } from '../errors/index.js';
import type { AppContext } from './state.js';

/** A contract operation's implementation, registered by operationId. It writes status and body to ctx. */
export type OperationHandler = (c: OpenApiContext, ctx: AppContext) => Promise<void> | void;
export type OperationHandlers = Record<string, OperationHandler>;

export function requirePrincipal(ctx: AppContext) {
  const principal = ctx.state.principal;
  if (!principal) throw new AppError('UNAUTHORIZED', 'Invalid or missing API key');
  return principal;
}

export function json(ctx: AppContext, status: number, body: unknown): void {
  ctx.status = status;
  ctx.body = body;
}

/** Typed access to the validated request body. The schema has already been checked. */
export function bodyOf<T>(c: OpenApiContext): T {
  return c.request.requestBody as T;
}

export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** The status a usage row records for a request whose client left before its answer was complete. */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * The reason work stops when its client has gone: not a failure of the service, so it is neither
 * answered nor logged as one (the usage row records 499, nginx's "client closed request").
 */
export class ClientDisconnectedError extends Error {
  constructor() {
    super('client disconnected');
    this.name = 'ClientDisconnectedError';
  }
}

/** Aborted when the client goes away before the response is complete, so the work stops with it. */
export function clientDisconnectSignal(ctx: AppContext): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort(new ClientDisconnectedError());
  });
  return controller.signal;
}
