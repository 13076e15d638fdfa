import type { Db } from '../storage/index.js';
import { paged, type SectionItem, tableActivity, type UserDataSection } from '../users/index.js';
import type { SqlUsageStore } from './sql-usage-store.js';
import type { UserUsageRow } from './types.js';

/** Usage rows per page of an export (a row is ~200 bytes of JSON). */
const PAGE_ROWS = 500;

function rowBody(r: UserUsageRow): SectionItem<'usage'> {
  return {
    request_id: r.requestId,
    endpoint: r.endpoint,
    model: r.model,
    status: r.status,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    credits: r.credits,
    cached: r.cached,
    latency_ms: r.latencyMs,
    created_at: new Date(r.createdAt).toISOString(),
  };
}

/**
 * The `usage` section of an end user's data: the rows of the requests that named them. Rows are written
 * behind (BufferedUsageStore): both calls write this process's buffer first, so the export holds the user's
 * latest requests and the erase leaves none of them naming the user. The erase keeps the rows, without the
 * user id: they are the account's requests, credits and tokens.
 */
export function usageUserData(
  buffer: { flush(): Promise<void> },
  store: SqlUsageStore,
  db: Db,
): UserDataSection<'usage'> {
  const activity = tableActivity(db, 'usage_records', 'created_at');
  return {
    name: 'usage',
    // The requests that named each end user (an erased one's name none): their latest is when they were last seen.
    activity: {
      counts: 'requests',
      async list(accountId, userId) {
        await buffer.flush();
        return activity(accountId, userId);
      },
    },
    async *export(tenant) {
      await buffer.flush();
      const rows = paged(
        (after: number | undefined, limit) => store.userRows(tenant, after ?? 0, limit),
        (r) => r.id,
        PAGE_ROWS,
      );
      for await (const row of rows) yield rowBody(row);
    },
    async erase(tenant) {
      await buffer.flush();
      return store.forgetUser(tenant);
    },
  };
}
