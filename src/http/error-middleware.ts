import type Koa from 'koa';
import { AppError, asAppError, errorBody } from '../errors/index.js';
import { CLIENT_CLOSED_REQUEST, ClientDisconnectedError } from './call.js';
import type { AppContext } from './types.js';

/** Errors thrown by Koa's body parser (http-errors) carry `status` and `type`. */
interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
  message?: string;
  limit?: number;
}

/** Any thrown value as an AppError: the body parser's, Koa's and our own; an absent engine 503, unknown ones 500. */
function toAppError(err: unknown, bodyLimit: number): AppError {
  if (err instanceof AppError) return err;
  const e = (err ?? {}) as HttpLikeError;
  const status = e.status ?? e.statusCode;
  if (e.type === 'entity.parse.failed' || err instanceof SyntaxError) {
    return new AppError(
      'INVALID_JSON',
      'The body is not valid JSON',
      { field: 'body', reason: e.message ?? 'parse error' },
      {},
      { cause: err },
    );
  }
  if (status === 413 || e.type === 'entity.too.large') {
    // The parser's own limit: routes may have their own (x-body-limit-bytes in the contract).
    const limit = typeof e.limit === 'number' ? e.limit : bodyLimit;
    return new AppError(
      'PAYLOAD_TOO_LARGE',
      `The body is over the ${limit}-byte limit`,
      { limit_bytes: limit },
      {},
      { cause: err },
    );
  }
  if (status === 415 || e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') {
    return new AppError('UNSUPPORTED_MEDIA_TYPE', e.message ?? 'Unsupported media type', null, {}, { cause: err });
  }
  if (status === 400 && e.expose) {
    return new AppError(
      'INVALID_PARAMETER',
      e.message ?? 'Bad request',
      { field: 'body', reason: e.message ?? '' },
      {},
      { cause: err },
    );
  }
  return asAppError(err);
}

/** Outermost middleware: every failure leaves as the error body with its code's status. */
export function errorMiddleware(bodyLimit: number): Koa.Middleware {
  return async (ctx: AppContext, next) => {
    try {
      await next();
    } catch (err) {
      if (err instanceof ClientDisconnectedError) {
        // Nobody is left to read an answer; the status is for the usage row.
        ctx.status = CLIENT_CLOSED_REQUEST;
        ctx.state.log.debug('client disconnected');
        return;
      }
      const appError = toAppError(err, bodyLimit);
      if (appError.code === 'INTERNAL_ERROR') ctx.state.log.error({ err }, 'unhandled error');
      else if (appError.details?.engine) ctx.state.log.warn({ err }, 'an engine could not be reached');
      ctx.status = appError.status;
      ctx.state.usage.errorCode = appError.code;
      ctx.set(appError.headers);
      const body = errorBody(appError);
      // A 5xx names its trace, so that an operator finds the request's spans (and its log lines) from the answer.
      const traceId = ctx.state.traceId;
      if (traceId !== undefined && appError.status >= 500) body.details = { ...body.details, trace_id: traceId };
      ctx.body = body;
    }
  };
}
