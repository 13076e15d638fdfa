import { csvOf } from './csv.js';
import type { GroupPage, GroupPageQuery, UsageGroup, UsageGroupBy, UsageStore, UsageTotals } from './types.js';

/** An API key as the series by key names it. */
export interface KeyLabel {
  id: string;
  name: string | null;
  prefix: string;
}

export function totalsBody(t: UsageTotals) {
  return {
    requests: t.requests,
    credits: t.credits,
    prompt_tokens: t.promptTokens,
    completion_tokens: t.completionTokens,
    total_tokens: t.promptTokens + t.completionTokens,
  };
}

/** A series item as GET /z1/usage has it: by key, with the key's name and prefix (null for no key). */
export type SeriesItem = ReturnType<typeof totalsBody> & {
  key: string | null;
  key_name?: string | null;
  key_prefix?: string | null;
};

function itemsOf(groups: readonly UsageGroup[], groupBy: UsageGroupBy, keys: ReadonlyMap<string, KeyLabel>) {
  return groups.map(({ key, ...totals }): SeriesItem => {
    if (groupBy !== 'key') return { key, ...totalsBody(totals) };
    const label = key === null ? undefined : keys.get(key);
    return { key, key_name: label?.name ?? null, key_prefix: label?.prefix ?? null, ...totalsBody(totals) };
  });
}

/**
 * A period's usage split by day, model, key or end user, as the API and the dashboard show it (a page of
 * items, key groups named) and download it (CSV: the items' fields in their order, one row per group).
 */
export class UsageBreakdowns {
  readonly #usage: Pick<UsageStore, 'groupPage'>;
  readonly #keys: (accountId: string) => Promise<readonly KeyLabel[]>;

  constructor(usage: Pick<UsageStore, 'groupPage'>, keys: (accountId: string) => Promise<readonly KeyLabel[]>) {
    this.#usage = usage;
    this.#keys = keys;
  }

  async page(
    accountId: string,
    period: { start: number; end: number },
    groupBy: UsageGroupBy,
    query: GroupPageQuery,
  ): Promise<{ items: SeriesItem[]; page: GroupPage }> {
    const [page, keys] = await Promise.all([
      this.#usage.groupPage(accountId, period.start, period.end, groupBy, query),
      groupBy === 'key' ? this.#keys(accountId) : Promise.resolve([]),
    ]);
    return { items: itemsOf(page.groups, groupBy, new Map(keys.map((k) => [k.id, k]))), page };
  }

  /** Every group of the period as RFC 4180 CSV, with the file name a download gives it. */
  async csv(
    accountId: string,
    period: { start: number; end: number },
    groupBy: UsageGroupBy,
    userId?: string,
  ): Promise<{ filename: string; body: string }> {
    const { items } = await this.page(accountId, period, groupBy, { userId });
    const labels = groupBy === 'key' ? ['key_name', 'key_prefix'] : [];
    const header = ['key', ...labels, 'requests', 'credits', 'prompt_tokens', 'completion_tokens', 'total_tokens'];
    const rows = items.map((item) => header.map((column) => item[column as keyof SeriesItem] ?? null));
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    return { filename: `pvai-usage-${groupBy}-${day(period.start)}-${day(period.end)}.csv`, body: csvOf(header, rows) };
  }
}
