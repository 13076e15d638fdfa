import { AppError } from '../errors/index.js';
import type { Principal } from '../kernel/index.js';
import type { WorkStop } from './ports.js';
import type { AppContext, Call } from './types.js';

/** The caller of an operation behind an API key; 401 if there is none (never for such operations). */
export function requirePrincipal(call: Pick<Call, 'principal'>): Principal {
  if (!call.principal) throw new AppError('UNAUTHORIZED', 'Invalid or missing API key');
  return call.principal;
}

/** The status a usage row records for a request whose client left before its answer was complete. */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * The status a usage row records for a stream the server cut because its client stopped reading it
 * (http.streamWriteTimeoutMs): the client's status line said 200, and unlike 499 the server ended it.
 * A 4xx: the client's doing, not an error of the service (the SLA counts 5xx only).
 */
export const STREAM_STALLED = 408;

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

/**
 * Aborted when the client goes away before the response is complete, so the work stops with it; or
 * when the server stops waiting for work in flight (`stopping`, whose reason is the answer: a 503).
 */
function clientDisconnectSignal(ctx: AppContext, stopping?: WorkStop): AbortSignal {
  const controller = new AbortController();
  let ticket: number | undefined;
  if (stopping?.stopped) controller.abort(stopping.reason);
  else if (stopping) ticket = stopping.follow((reason) => controller.abort(reason));
  ctx.res.once('close', () => {
    if (ticket !== undefined) stopping?.unfollow(ticket);
    if (!ctx.res.writableFinished) controller.abort(new ClientDisconnectedError());
  });
  return controller.signal;
}

/**
 * The handler's view of a Koa request: made once per request, the signal only when asked for. A class, not a
 * literal with a getter (V8 defines a literal's accessor anew each time it is evaluated).
 */
class KoaCall implements Call {
  readonly requestId: string;
  readonly principal: Call['principal'];
  readonly usage: Call['usage'];
  readonly upload: Call['upload'];
  readonly streamedUpload: Call['streamedUpload'];
  #signal: AbortSignal | undefined;

  constructor(
    private readonly ctx: AppContext,
    private readonly stopping: WorkStop | undefined,
  ) {
    const state = ctx.state;
    this.requestId = state.requestId;
    this.principal = state.principal;
    this.usage = state.usage;
    this.upload = state.upload;
    this.streamedUpload = state.streamedUpload;
  }

  get log(): Call['log'] {
    return this.ctx.state.log;
  }

  disconnectSignal(): AbortSignal {
    this.#signal ??= clientDisconnectSignal(this.ctx, this.stopping);
    return this.#signal;
  }
}

export function callOf(ctx: AppContext, stopping?: WorkStop): Call {
  return new KoaCall(ctx, stopping);
}
