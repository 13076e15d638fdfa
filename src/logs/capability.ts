import type { Clock } from '../clock/index.js';
import type { Db } from '../storage/index.js';
import { logOperations } from './operations.js';
import { RequestLogWriter } from './request-log-writer.js';
import { SqlRequestLogStore } from './sql-request-log-store.js';
import { requestLogsUserData } from './user-data.js';

/**
 * Request logs: a row per authenticated request (key, end user, endpoint, model, status, tokens, credits, latency,
 * cache hit, error code; the text only where the account turned `log_content` on), written behind the requests,
 * swept past `logs.retentionDays`, read by `GET /z1/logs` and the dashboard, in the end user's export and erase.
 */
export function logsCapability(deps: {
  db: Db;
  clock: Clock;
  retentionDays: number;
  onError?: (err: unknown, pending: number) => void;
}) {
  const store = new SqlRequestLogStore(deps.db);
  const writer = new RequestLogWriter(store, {
    clock: deps.clock,
    retentionDays: deps.retentionDays,
    onError: deps.onError,
  });
  return {
    name: 'logs',
    writer,
    /** The dashboard's reads: the same as the API's, after the pending rows are written. */
    reader: { flush: () => writer.flush(), store },
    operations: logOperations({ writer, store }),
    endOfRequest: writer.record.bind(writer),
    userData: requestLogsUserData(writer, store),
    close: () => writer.close(),
  };
}
