import { AppError } from '../../errors/index.js';
import { type ResponseEvent, terminalEventType } from '../events.js';
import type { ResponseBody } from '../types.js';

/**
 * Why a background response ended `failed` without its run ending it: the server running it stopped (a crash,
 * a kill, a stop that could not wait for it) after its first model call may have been made. It is never run
 * again, as those calls may have been charged; the client creates it again.
 */
export function serverStopped(): AppError {
  return new AppError(
    'SERVICE_UNAVAILABLE',
    'The server running this background response stopped before it ended; create the response again',
  );
}

/** Why a queued response ends `failed` when its key was revoked (or its account removed) before it ran. */
export function keyRevoked(): AppError {
  return new AppError(
    'UNAUTHORIZED',
    'The API key that created this background response was revoked before it ran; create it again with a valid key',
  );
}

/** Any failure as the response's error (errors/asAppError: an absent engine is 503, not an internal error). */
export { asAppError } from '../../errors/index.js';

/** A response that had not ended (queued or in progress), as it ends without its run: cancelled or failed. */
export function endedBody(body: ResponseBody, end: 'cancelled' | AppError, nowMs: number): ResponseBody {
  if (end === 'cancelled') return { ...body, status: 'cancelled', completed_at: Math.floor(nowMs / 1000) };
  return {
    ...body,
    status: 'failed',
    completed_at: null,
    error: { code: end.code.toLowerCase(), message: end.message },
  };
}

/** Whether a response's status is a final one. */
export function isEnded(status: ResponseBody['status']): boolean {
  return status !== 'queued' && status !== 'in_progress';
}

/** The last event of a response, numbered `sequence`. */
export function terminalEvent(body: ResponseBody, sequence: number): ResponseEvent {
  return { type: terminalEventType(body.status), sequence_number: sequence, response: body };
}
