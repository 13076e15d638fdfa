import type { Clock } from '../clock/index.js';
import type { Db } from '../storage/index.js';
import { type KeyLabel, UsageBreakdowns } from './breakdown.js';
import { type BufferedUsageOptions, BufferedUsageStore } from './buffered-usage-store.js';
import { DailyUsageRollup } from './daily-rollup.js';
import { type UsageDeps, usageOperations } from './operations.js';
import { SqlUsageStore } from './sql-usage-store.js';
import { usageUserData } from './user-data.js';

/**
 * Usage: one row per authenticated request, written behind (batched, spilled to a file while the database is
 * away), the daily rollup the dashboard charts, `GET /z1/usage`, and the user's rows in the export.
 */
export function usageCapability(
  deps: Pick<UsageDeps, 'balance' | 'rateLimits'> & {
    db: Db;
    clock: Clock;
    writes: BufferedUsageOptions;
    /** The account's keys, revoked ones included (their usage stays theirs): the series by key names them. */
    keys(accountId: string): Promise<readonly KeyLabel[]>;
  },
) {
  const rows = new SqlUsageStore(deps.db);
  const service = new BufferedUsageStore(rows, deps.writes);
  const rollup = new DailyUsageRollup(deps.db);
  const breakdowns = new UsageBreakdowns(service, deps.keys);
  return {
    name: 'usage',
    service,
    /** The dashboard's charts: the daily rollup, after the rows still buffered are written. */
    daily: {
      flush: () => service.flush(),
      days: (accountId: string, start: number, end: number) => rollup.days(accountId, start, end),
      /** The period by model, key or end user, and its CSV (the API's). */
      breakdowns,
    },
    operations: usageOperations({ ...deps, usage: service, breakdowns }),
    endOfRequest: service.record.bind(service),
    userData: usageUserData(service, rows, deps.db),
    close: () => service.close(),
  };
}
