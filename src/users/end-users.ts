import { AppError } from '../errors/index.js';
import type { EndUserCount, SectionName, UserActivity, UserDataSection } from './types.js';

/** An end user of the account, with the sections' counts and when one of them last saw them. */
export interface EndUserSummary {
  userId: string;
  counts: Record<EndUserCount, number>;
  /** Epoch milliseconds. */
  lastSeenAt: number;
}

export interface EndUserPage {
  users: EndUserSummary[];
  hasMore: boolean;
}

/** Which end users: after `after` (by id, in the list's order), at most `limit`, only `userId` when given. */
export interface EndUserQuery {
  after?: string | undefined;
  limit: number;
  userId?: string | undefined;
}

/**
 * Every end user the sections hold something of, each with every section's count (0 where it has none): the
 * sections' activity merged by user id, most recently seen first, ties by id. The account's end users are read
 * whole (one grouped read per section) and paged here, so a page costs the account's end users, not the page.
 */
export async function endUsersOf(
  sections: readonly UserDataSection<SectionName>[],
  accountId: string,
  userId?: string,
): Promise<EndUserSummary[]> {
  const counting = sections.flatMap((s) => (s.activity ? [s.activity] : []));
  const zero = Object.fromEntries(counting.map((a) => [a.counts, 0])) as Record<EndUserCount, number>;
  const users = new Map<string, EndUserSummary>();
  const lists = await Promise.all(counting.map(async (a) => [a.counts, await a.list(accountId, userId)] as const));
  for (const [counts, activity] of lists as ReadonlyArray<readonly [EndUserCount, UserActivity[]]>) {
    for (const { userId: id, count, lastSeenAt } of activity) {
      let user = users.get(id);
      if (!user) {
        user = { userId: id, counts: { ...zero }, lastSeenAt };
        users.set(id, user);
      }
      user.counts[counts] += count;
      user.lastSeenAt = Math.max(user.lastSeenAt, lastSeenAt);
    }
  }
  return [...users.values()].sort(
    (a, b) => b.lastSeenAt - a.lastSeenAt || (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0),
  );
}

/** A page of the list; an `after` that is not (or no longer) one of the account's end users is a 404. */
export function endUserPage(all: readonly EndUserSummary[], query: EndUserQuery): EndUserPage {
  let from = 0;
  if (query.after !== undefined) {
    const at = all.findIndex((u) => u.userId === query.after);
    if (at < 0) throw new AppError('NOT_FOUND', `No end user ${query.after} in this account`, { field: 'after' });
    from = at + 1;
  }
  return { users: all.slice(from, from + query.limit), hasMore: all.length > from + query.limit };
}
