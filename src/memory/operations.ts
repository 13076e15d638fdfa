import { type Call, endUserOf, type Operations, requirePrincipal, type Schema } from '../http/index.js';
import type { TierPolicy } from '../tiers/index.js';
import type { MemoryService } from './memory-service.js';
import type { MemoryChange, MemoryRecord } from './types.js';

type MemoryOperationId =
  | 'listMemories'
  | 'createMemory'
  | 'deleteUserMemories'
  | 'updateMemory'
  | 'deleteMemory'
  | 'searchMemories'
  | 'getMemoryHistory';

export function memoryBody(m: MemoryRecord): Schema<'Memory'> {
  return {
    id: m.id,
    object: 'memory',
    user_id: m.userId,
    content: m.content,
    metadata: m.metadata,
    source: m.source,
    created_at: new Date(m.createdAt).toISOString(),
    updated_at: new Date(m.updatedAt).toISOString(),
  };
}

export function changeBody(c: MemoryChange): Schema<'MemoryChange'> {
  return {
    event: c.event,
    content: c.content,
    previous_content: c.previousContent,
    source: c.source,
    at: new Date(c.at).toISOString(),
  };
}

/**
 * /z1/memory: every operation is scoped by the key's account and the request's user_id; another
 * tenant's memory id is 404, exactly as a missing one.
 */
export function memoryOperations(
  memory: MemoryService,
  tiers: Pick<TierPolicy, 'checkRagK'>,
): Operations<MemoryOperationId> {
  const tenantOf = (call: Call, userId: string) => {
    // Every memory operation names its end user: so does its usage row (the user's export lists it).
    const principal = requirePrincipal(call);
    call.usage.userId = endUserOf(principal, userId);
    return { accountId: principal.account.id, userId };
  };
  return {
    listMemories: async ({ query }, call) => {
      const list = await memory.list(tenantOf(call, query.user_id));
      return { status: 200, body: { object: 'list', data: list.map(memoryBody) } };
    },
    createMemory: async ({ body }, call) => {
      const created = await memory.create(tenantOf(call, body.user_id), {
        content: body.content,
        metadata: body.metadata,
      });
      return { status: 201, body: memoryBody(created) };
    },
    deleteUserMemories: async ({ query }, call) => {
      const deleted = await memory.forget(tenantOf(call, query.user_id));
      return { status: 200, body: { object: 'memory.deleted', deleted } };
    },
    updateMemory: async ({ params, query, body }, call) => {
      const updated = await memory.update(tenantOf(call, query.user_id), params.memory_id, {
        content: body.content,
        metadata: body.metadata,
      });
      return { status: 200, body: memoryBody(updated) };
    },
    deleteMemory: async ({ params, query }, call) => {
      await memory.delete(tenantOf(call, query.user_id), params.memory_id);
      return { status: 200, body: { id: params.memory_id, object: 'memory.deleted', deleted: true } };
    },
    searchMemories: async ({ body }, call) => {
      tiers.checkRagK(requirePrincipal(call).account, body.k, 'k');
      const found = await memory.search(tenantOf(call, body.user_id), body.query, body.k ?? 5);
      return {
        status: 200,
        body: { object: 'list', data: found.map((m) => ({ ...memoryBody(m), score: m.score })) },
      };
    },
    getMemoryHistory: async ({ params, query }, call) => {
      const changes = await memory.history(tenantOf(call, query.user_id), params.memory_id);
      return { status: 200, body: { object: 'list', data: changes.map(changeBody) } };
    },
  };
}
