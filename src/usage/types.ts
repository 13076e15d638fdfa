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

/** An end user of an account, whose usage rows are exported or kept without them. */
export interface EndUser {
  accountId: string;
  userId: string;
}

/** A usage row as an end user's export shows it (the key that made the request is the account's, not theirs). */
export interface UserUsageRow {
  id: number;
  requestId: string;
  endpoint: string;
  model: string | null;
  status: number;
  promptTokens: number;
  completionTokens: number;
  credits: number;
  cached: boolean;
  latencyMs: number;
  createdAt: number;
}
