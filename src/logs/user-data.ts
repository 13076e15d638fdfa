import { paged, type UserDataSection } from '../users/index.js';
import { requestLogBody } from './log-row-body.js';
import type { RequestLogWriter } from './request-log-writer.js';
import type { SqlRequestLogStore } from './sql-request-log-store.js';

/** Rows per page of an export (with their text a row may be 64 KiB; without it ~400 bytes). */
const PAGE_ROWS = 100;

/**
 * The `request_logs` section of an end user's data: the logs of the requests that named them, with their text
 * where the account kept it. Both calls write this process's pending rows first, so the export holds the user's
 * latest requests and the erase leaves none behind. The erase deletes the rows (the account's counts live on in
 * the usage rows).
 */
export function requestLogsUserData(
  writer: Pick<RequestLogWriter, 'flush'>,
  store: SqlRequestLogStore,
): UserDataSection<'request_logs'> {
  return {
    name: 'request_logs',
    async *export(tenant) {
      await writer.flush();
      const rows = paged(
        (after: number | undefined, limit) => store.userRows(tenant, after ?? 0, limit),
        (r) => r.id,
        PAGE_ROWS,
      );
      for await (const row of rows) yield requestLogBody(row);
    },
    async erase(tenant) {
      await writer.flush();
      return store.deleteUser(tenant);
    },
  };
}
