import { join, resolve } from 'node:path';
import type { Logger } from 'pino';

/**
 * The options of a write-behind buffer (usage rows, SLA buckets) in a server: where it spills what the database
 * does not take (`<dataDir>/pending/<kind>.jsonl`, written back at the next start if it is still there), and the
 * log line of a failed write, which keeps its rows to retry.
 */
export function pendingWrites(
  dataDir: string,
  logger: Logger,
  kind: 'usage' | 'sla' | 'refunds',
): { spillFile: string; onError: (err: unknown, pending: number) => void } {
  const what = { usage: 'usage rows', sla: 'SLA buckets', refunds: 'refunds' }[kind];
  return {
    spillFile: join(resolve(dataDir), 'pending', `${kind}.jsonl`),
    onError: (err, pending) => logger.error({ err, pending }, `writing ${what} failed; kept to write again`),
  };
}
