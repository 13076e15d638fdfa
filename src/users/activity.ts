import type { Db } from '../storage/index.js';
import type { UserActivity } from './types.js';

/**
 * A section's activity read from its own table (`table` and its time column `at`, fixed in the section's code):
 * per end user of the account (only `userId` when given) the rows that name them and the latest `at`. Served by
 * each table's (account_id, user_id, …) index.
 */
export function tableActivity(
  db: Db,
  table: string,
  at: string,
): (accountId: string, userId?: string) => Promise<UserActivity[]> {
  return async (accountId, userId) => {
    const rows = await db.query(
      `SELECT user_id, count(*) AS n, max(${at}) AS last_at FROM ${table}
        WHERE account_id = $1 AND user_id IS NOT NULL ${userId === undefined ? '' : 'AND user_id = $2'}
        GROUP BY user_id`,
      userId === undefined ? [accountId] : [accountId, userId],
    );
    return rows.map((r) => ({ userId: String(r.user_id), count: Number(r.n), lastSeenAt: Number(r.last_at) }));
  };
}
