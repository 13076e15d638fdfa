export { BufferedUsageStore } from './buffered-usage-store.js';
export { type DailyUsage, DailyUsageRollup } from './daily-rollup.js';
export { usageOperations } from './operations.js';
export { SqlUsageStore } from './sql-usage-store.js';
export type { UsageRecord } from './types.js';
export { usageUserData } from './user-data.js';
