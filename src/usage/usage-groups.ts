import type { Db, Row } from '../storage/index.js';
import type { GroupPage, GroupPageQuery, UsageGroup, UsageTotals } from './types.js';

/** A group's sums over usage rows. */
export const SUMS = `count(*) AS requests, coalesce(sum(credits), 0) AS credits,
  coalesce(sum(prompt_tokens), 0) AS prompt_tokens, coalesce(sum(completion_tokens), 0) AS completion_tokens`;

export function toTotals(row: Row | undefined): UsageTotals {
  return {
    requests: Number(row?.requests ?? 0),
    credits: Number(row?.credits ?? 0),
    promptTokens: Number(row?.prompt_tokens ?? 0),
    completionTokens: Number(row?.completion_tokens ?? 0),
  };
}

/** The column each per-request grouping reads. NULL (no key, no end user) is the group '' in SQL, null outside. */
const COLUMN = { key: 'key_id', user: 'user_id' } as const;

/**
 * A page of the period's usage per key or per end user, summed from the rows (the hourly rollup has neither):
 * the period's rows through (account_id, created_at), grouped, the groups after `after` in the database's order
 * of their ids, the group of none last, so a cursor never has to name it. `limit + 1` groups are read to know
 * whether a page follows.
 */
export async function requestGroups(
  db: Db,
  accountId: string,
  period: { start: number; end: number },
  groupBy: keyof typeof COLUMN,
  page: GroupPageQuery,
): Promise<GroupPage> {
  const column = COLUMN[groupBy];
  const params: unknown[] = [accountId, period.start, period.end];
  const next = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const onlyUser = page.userId === undefined ? '' : `AND user_id = ${next(page.userId)}`;
  const after = page.after === undefined ? '' : `WHERE bucket > ${next(page.after)} OR bucket = ''`;
  const limit = page.limit === undefined ? '' : `LIMIT ${next(page.limit + 1)}`;
  const rows = await db.query(
    `SELECT * FROM (
       SELECT coalesce(${column}, '') AS bucket, ${SUMS} FROM usage_records
        WHERE account_id = $1 AND created_at >= $2 AND created_at < $3 ${onlyUser}
        GROUP BY coalesce(${column}, '')) AS per_group
      ${after}
      ORDER BY CASE WHEN bucket = '' THEN 1 ELSE 0 END, bucket ${limit}`,
    params,
  );
  const groups = rows.map((row) => ({ key: row.bucket === '' ? null : String(row.bucket), ...toTotals(row) }));
  return pageOf(groups, { limit: page.limit });
}

/**
 * A page of a whole series already in key order (its null group last): the groups after `after` (compared as
 * the series was sorted), at most `limit`.
 */
export function pageOf(series: readonly UsageGroup[], page: GroupPageQuery): GroupPage {
  const after = page.after;
  const rest = after === undefined ? series : series.filter((g) => g.key === null || g.key > after);
  const limit = page.limit ?? rest.length;
  return { groups: rest.slice(0, limit), hasMore: rest.length > limit };
}
