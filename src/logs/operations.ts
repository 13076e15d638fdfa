import { AppError } from '../errors/index.js';
import { endUserOf, type Operations, requirePrincipal } from '../http/index.js';
import { logId, parseLogId, requestLogBody } from './log-row-body.js';
import type { RequestLogWriter } from './request-log-writer.js';
import type { SqlRequestLogStore } from './sql-request-log-store.js';

/** An RFC 3339 date (midnight UTC) or date-time, as the contract's Instant admits; 400 naming it otherwise. */
function instant(value: string | undefined, field: 'start' | 'end'): number | undefined {
  if (value === undefined) return undefined;
  const text = value.replace(/:60(?=(\.\d+)?(Z|[+-]\d{2}:?\d{2})$)/i, ':59');
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : Date.parse(text);
  if (!Number.isFinite(ms)) {
    throw new AppError('INVALID_PARAMETER', `${field} is not a date or date-time this server can read`, {
      field,
      reason: 'must be an RFC 3339 date or date-time',
    });
  }
  return ms;
}

function badCursor(): AppError {
  // As an unknown id in a path: 404, whether the id is malformed, unknown, or another account's.
  return new AppError('NOT_FOUND', 'after names no request log of this account', {
    field: 'after',
    reason: 'must be the id of a request log of an earlier page',
  });
}

/**
 * `GET /z1/logs` and `GET /z1/logs/{request_id}`: the caller's account's request logs. A key bound to an end user
 * reads that user's alone (naming another is 403 `END_USER_NOT_ALLOWED`, as on every operation).
 */
export function logOperations(deps: {
  writer: Pick<RequestLogWriter, 'flush'>;
  store: SqlRequestLogStore;
}): Operations<'listRequestLogs' | 'getRequestLog'> {
  return {
    listRequestLogs: async ({ query }, call) => {
      const principal = requirePrincipal(call);
      const accountId = principal.account.id;
      const userId = principal.key.userId === null ? query.user_id : endUserOf(principal, query.user_id);
      const limit = query.limit ?? 20;
      await deps.writer.flush();
      let after: Awaited<ReturnType<SqlRequestLogStore['cursorOf']>>;
      if (query.after !== undefined) {
        const id = parseLogId(query.after);
        after = id === undefined ? undefined : await deps.store.cursorOf(accountId, id);
        if (!after) throw badCursor();
      }
      const filter = {
        keyId: query.key_id,
        userId,
        status: query.status,
        errorsOnly: query.errors_only,
        model: query.model,
        start: instant(query.start, 'start'),
        end: instant(query.end, 'end'),
      };
      // One row more than the page tells whether another page follows.
      const rows = await deps.store.list(accountId, filter, after, limit + 1);
      const page = rows.slice(0, limit);
      const first = page[0];
      const last = page.at(-1);
      return {
        status: 200,
        body: {
          object: 'list',
          data: page.map(requestLogBody),
          first_id: first ? logId(first.id) : null,
          last_id: last ? logId(last.id) : null,
          has_more: rows.length > limit,
        },
      };
    },
    getRequestLog: async ({ params }, call) => {
      const principal = requirePrincipal(call);
      await deps.writer.flush();
      const bound = principal.key.userId ?? undefined;
      const row = await deps.store.byRequestId(principal.account.id, params.request_id, bound);
      if (!row) {
        throw new AppError('NOT_FOUND', `No request log ${params.request_id}`, { request_id: params.request_id });
      }
      return { status: 200, body: requestLogBody(row) };
    },
  };
}
