export { SqlUsageStore } from './sql-usage-store.js';
export type { UsageGroupBy, UsageRecord, UsageStore, UsageTotals } from './types.js';
