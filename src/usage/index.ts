export { BufferedUsageStore } from './buffered-usage-store.js';
export { type DailyUsage, DailyUsageRollup } from './daily-rollup.js';
export { type UsageDeps, usageOperations } from './operations.js';
export { SqlUsageStore } from './sql-usage-store.js';
export type { UsageGroupBy, UsageRecord, UsageStore, UsageTotals } from './types.js';
