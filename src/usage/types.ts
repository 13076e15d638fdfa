import type { RequestRecord } from '../http/index.js';

/** One authenticated request's row: the shape the HTTP layer records (http/ports.ts), stored as is. */
export type UsageRecord = RequestRecord;

export interface UsageTotals {
  requests: number;
  credits: number;
  promptTokens: number;
  completionTokens: number;
}

export type UsageGroupBy = 'day' | 'model';

/** The storage port for usage: one row per authenticated request. */
export interface UsageStore {
  record(row: UsageRecord): Promise<void>;
  totals(accountId: string, start: number, end: number): Promise<UsageTotals>;
  series(
    accountId: string,
    start: number,
    end: number,
    groupBy: UsageGroupBy,
  ): Promise<Array<UsageTotals & { key: string }>>;
  /** Makes every recorded row durable (a no-op for stores that write at once). */
  flush(): Promise<void>;
}
