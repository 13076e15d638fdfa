import type { RequestRecord } from '../http/index.js';

/** One authenticated request's row: the shape the HTTP layer records (http/ports.ts), stored as is. */
export type UsageRecord = RequestRecord;

export interface UsageTotals {
  requests: number;
  credits: number;
  promptTokens: number;
  completionTokens: number;
}

/** The groups the hourly rollup can sum (it has no key or end user). */
export type RollupGroupBy = 'day' | 'model';

/** The groups a usage series splits into: the rollup's, and per key or per end user (read from the rows). */
export type UsageGroupBy = RollupGroupBy | 'key' | 'user';

/** One group of a series: its key (a day, a model, a key id, an end user id; null for none) and its totals. */
export type UsageGroup = UsageTotals & { key: string | null };

/** Which page of a series: the groups after `after` (by key), at most `limit` (every one when absent). */
export interface GroupPageQuery {
  after?: string | undefined;
  limit?: number | undefined;
  /** Only this end user's requests (a key bound to them asks). */
  userId?: string | undefined;
}

export interface GroupPage {
  groups: UsageGroup[];
  hasMore: boolean;
}

/** The storage port for usage: one row per authenticated request. */
export interface UsageStore {
  record(row: UsageRecord): Promise<void>;
  totals(accountId: string, start: number, end: number): Promise<UsageTotals>;
  series(
    accountId: string,
    start: number,
    end: number,
    groupBy: RollupGroupBy,
  ): Promise<Array<UsageTotals & { key: string }>>;
  /** A page of the period's series in the order of the groups' keys, the group of none (null) last. */
  groupPage(
    accountId: string,
    start: number,
    end: number,
    groupBy: UsageGroupBy,
    page: GroupPageQuery,
  ): Promise<GroupPage>;
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
