export interface UsageRecord {
  accountId: string;
  keyId: string | null;
  requestId: string;
  /** The operationId, e.g. createChatCompletion. */
  endpoint: string;
  model: string | null;
  status: number;
  promptTokens: number;
  completionTokens: number;
  credits: number;
  latencyMs: number;
  cached: boolean;
  createdAt: number;
}

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
