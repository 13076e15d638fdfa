import { AppError } from '../../errors/index.js';
import type { Call, Reply } from '../../http/index.js';
import type { Principal } from '../../kernel/index.js';
import type { PreparedResponse } from '../prepare.js';
import type { StoredResponse } from '../types.js';
import type { BackgroundResponses } from './background.js';
import { isEnded } from './ending.js';
import { sseOf } from './event-log.js';

const SSE_HEADERS = { 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' };

/** The answer of a request whose response runs without it: its events as stored, followed until the last. */
function eventsReply(background: BackgroundResponses, id: string, after: number, call: Call) {
  const { stream, finished } = sseOf(background.events(id, after, call.disconnectSignal()), (err) =>
    call.log.warn({ err, response: id }, 'reading the events of a background response failed'),
  );
  return { status: 200 as const, type: 'text/event-stream' as const, headers: SSE_HEADERS, stream, finished };
}

/**
 * POST /z1/responses with `background: true`: queued (nothing charged: its model calls are charged as they run,
 * and its run has its own usage row), answered at once with the `queued` response, or with `stream` its events
 * as they are made. A client that leaves the stream leaves the response running.
 */
export async function createInBackground(
  background: BackgroundResponses,
  principal: Principal,
  prepared: PreparedResponse,
  stream: boolean,
  call: Call,
): Promise<Reply<'createResponse'>> {
  const queued = await background.enqueue(principal, prepared);
  call.usage.credits = 0;
  const headers = { 'X-Credits-Charged': '0' };
  if (!stream) return { status: 200, headers, body: queued };
  const reply = eventsReply(background, prepared.id, -1, call);
  return { ...reply, headers: { ...headers, ...reply.headers } };
}

/** GET /z1/responses/{id}?stream=true: a background response's events after `starting_after`, then live. */
export function followStored(
  background: BackgroundResponses,
  found: StoredResponse,
  startingAfter: number | undefined,
  call: Call,
): Reply<'getResponse'> {
  if (!found.body.background) {
    throw new AppError('INVALID_PARAMETER', 'Only a background response can be streamed again: stream is for those', {
      field: 'stream',
      reason: 'needs a background response',
    });
  }
  return eventsReply(background, found.id, startingAfter ?? -1, call);
}

/** POST /z1/responses/{id}/cancel: the response cancelled, or as it ended when it ended first. */
export async function cancelStored(
  background: BackgroundResponses,
  found: StoredResponse,
  call: Call,
): Promise<Reply<'cancelResponse'>> {
  if (!found.body.background) {
    throw new AppError(
      'INVALID_PARAMETER',
      'Only background responses can be cancelled: this one ran while its request waited',
      { field: 'response_id', reason: 'not a background response' },
    );
  }
  if (isEnded(found.body.status)) return { status: 200, body: found.body };
  const body = await background.cancel(found.tenant.accountId, found.id, call.disconnectSignal());
  // Deleted while it was cancelled: as absent as any deleted response.
  if (!body) throw new AppError('NOT_FOUND', `No response ${found.id}`);
  return { status: 200, body };
}
