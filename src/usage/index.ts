export type { SeriesItem, UsageBreakdowns } from './breakdown.js';
export { BufferedUsageStore } from './buffered-usage-store.js';
export { usageCapability } from './capability.js';
export type { DailyUsage } from './daily-rollup.js';
export { SqlUsageStore } from './sql-usage-store.js';
export type { UsageRecord } from './types.js';
