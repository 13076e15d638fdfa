export { BufferedUsageStore } from './buffered-usage-store.js';
export { type DailyUsage, DailyUsageRollup } from './daily-rollup.js';
export { type UsageDeps, usageOperations } from './operations.js';
export { SqlUsageStore } from './sql-usage-store.js';
export type { EndUser, UsageGroupBy, UsageRecord, UsageStore, UsageTotals, UserUsageRow } from './types.js';
export { usageUserData } from './user-data.js';
