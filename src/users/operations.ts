import { type Call, endUserOf, type Operations, requirePrincipal } from '../http/index.js';
import type { UserDataService } from './user-data-service.js';

/**
 * GET /z1/users (the account's end users), GET /z1/users/{user_id}/export and DELETE /z1/users/{user_id}, for the key's account. Neither notes the
 * user on its own usage row (`call.usage.userId`): the erase's row would name the user it erased, and the
 * export's would be the next export's content.
 */
export function userOperations(
  users: UserDataService,
): Operations<'exportUserData' | 'eraseUserData' | 'listEndUsers'> {
  const tenantOf = (call: Call, userId: string) => {
    const principal = requirePrincipal(call);
    return { accountId: principal.account.id, userId: endUserOf(principal, userId) };
  };
  return {
    // A key bound to an end user lists that end user alone.
    listEndUsers: async ({ query }, call) => {
      const { account, key } = requirePrincipal(call);
      const page = await users.list(account.id, {
        after: query.after,
        limit: query.limit ?? 20,
        userId: key.userId ?? undefined,
      });
      const data = page.users.map((u) => ({
        object: 'end_user' as const,
        id: u.userId,
        ...u.counts,
        last_seen_at: new Date(u.lastSeenAt).toISOString(),
      }));
      const ids = { first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
      return { status: 200, body: { object: 'list', data, ...ids, has_more: page.hasMore } };
    },
    exportUserData: ({ params }, call) => ({ status: 200, streamed: users.export(tenantOf(call, params.user_id)) }),
    eraseUserData: async ({ params }, call) => {
      const erased = await users.erase(tenantOf(call, params.user_id));
      return { status: 200, body: { object: 'user.erased', user_id: params.user_id, erased } };
    },
  };
}
