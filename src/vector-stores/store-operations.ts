import { AppError } from '../errors/index.js';
import { type FileService, viewerOf } from '../files/index.js';
import { type Call, endUserOf, type Operations, requirePrincipal } from '../http/index.js';
import { readAttributeFilter } from '../kernel/index.js';
import { fusedRelevance } from '../retrieval/index.js';
import type { TierPolicy } from '../tiers/index.js';
import type { VectorStoreRecord } from './types.js';
import type { VectorStoreService } from './vector-store-service.js';
import { chunkWindow, storeBody } from './wire.js';

type StoreOperationId =
  | 'createVectorStore'
  | 'listVectorStores'
  | 'getVectorStore'
  | 'updateVectorStore'
  | 'deleteVectorStore'
  | 'searchVectorStore';

export interface StoreOperationDeps {
  stores: VectorStoreService;
  files: FileService;
  tiers: Pick<TierPolicy, 'rulesFor' | 'checkRagK'>;
  clock: () => number;
}

/** The viewer's store (404 for any other), its end user noted on the usage row. */
export async function ownedStore(stores: VectorStoreService, call: Call, id: string): Promise<VectorStoreRecord> {
  const store = await stores.get(viewerOf(call), id);
  if (store.userId !== null) call.usage.userId = store.userId;
  return store;
}

/** A page answer: the items, and whether more follow (one more than the limit was read). */
export function pageOf<T extends { id: string }>(items: readonly T[], limit: number) {
  const data = items.slice(0, limit);
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: items.length > limit,
  };
}

/**
 * /z1/vector_stores: a store belongs to the account, or to one end user (`user_id`, or the key's bound end user);
 * through a key bound to an end user only that end user's stores exist. Another's id is 404, as a missing one.
 */
export function storeOperations(deps: StoreOperationDeps): Operations<StoreOperationId> {
  const { stores, files, tiers, clock } = deps;
  const body = async (store: VectorStoreRecord) => storeBody(store, await stores.usage(store), clock());
  return {
    createVectorStore: async ({ body: request }, call) => {
      const principal = requirePrincipal(call);
      const input = request ?? {};
      const userId = input.user_id === undefined ? principal.key.userId : endUserOf(principal, input.user_id);
      if (userId !== null) call.usage.userId = userId;
      const viewer = viewerOf(call);
      const chunking = chunkWindow(input.chunking_strategy, 'chunking_strategy');
      const attached = [];
      for (const [i, id] of (input.file_ids ?? []).entries()) {
        attached.push(
          await files.get(viewer, id).catch((err: unknown) => {
            throw err instanceof AppError
              ? new AppError(err.code, err.message, { file_id: id, field: `file_ids[${i}]` })
              : err;
          }),
        );
      }
      const max = tiers.rulesFor(principal.account).maxVectorStores;
      if ((await stores.count(principal.account.id)) >= max) {
        throw new AppError('QUOTA_EXCEEDED', `The tier holds at most ${max} vector stores; delete some first`, {
          max_vector_stores: max,
        });
      }
      const store = await stores.create({
        owner: { accountId: principal.account.id, userId },
        name: input.name ?? null,
        description: input.description ?? null,
        metadata: input.metadata ?? {},
        chunking,
        expiresAfterDays: input.expires_after?.days ?? null,
      });
      // Attached as POST …/files attaches one: small files are then `completed` in this answer.
      for (const file of attached) await stores.attach(store, file, { attributes: {}, chunking: null }, true);
      return { status: 200, body: await body(store) };
    },
    listVectorStores: async ({ query }, call) => {
      const limit = query.limit ?? 20;
      const page = await stores.list(viewerOf(call), {
        order: query.order ?? 'desc',
        limit: limit + 1,
        after: query.after,
        before: query.before,
      });
      const bodies = await Promise.all(page.map(body));
      return { status: 200, body: pageOf(bodies, limit) };
    },
    getVectorStore: async ({ params }, call) => ({
      status: 200,
      body: await body(await ownedStore(stores, call, params.vector_store_id)),
    }),
    updateVectorStore: async ({ params, body: change }, call) => {
      const store = await ownedStore(stores, call, params.vector_store_id);
      const updated = await stores.update(store, {
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.metadata !== undefined ? { metadata: change.metadata } : {}),
        ...(change.expires_after !== undefined ? { expiresAfterDays: change.expires_after?.days ?? null } : {}),
      });
      return { status: 200, body: await body(updated) };
    },
    deleteVectorStore: async ({ params }, call) => {
      await stores.delete(await ownedStore(stores, call, params.vector_store_id));
      return { status: 200, body: { id: params.vector_store_id, object: 'vector_store.deleted', deleted: true } };
    },
    searchVectorStore: async ({ params, body: request }, call) => {
      const principal = requirePrincipal(call);
      const store = await ownedStore(stores, call, params.vector_store_id);
      if (request.rewrite_query === true) {
        throw new AppError('INVALID_PARAMETER', 'rewrite_query is not supported: pvai searches the query as given', {
          field: 'rewrite_query',
          reason: 'pvai does not rewrite queries',
        });
      }
      const k = request.max_num_results ?? 10;
      tiers.checkRagK(principal.account, k, 'max_num_results');
      let filter: ReturnType<typeof readAttributeFilter> | undefined;
      if (request.filters !== undefined && request.filters !== null) {
        filter = readAttributeFilter(request.filters, 'filters');
        if ('reason' in filter) {
          throw new AppError('INVALID_PARAMETER', `${filter.field} ${filter.reason}`, filter);
        }
      }
      const queries = typeof request.query === 'string' ? [request.query] : request.query;
      stores.requireLive(store);
      const hits = await stores.search([store], queries, k, {
        filter: filter && 'filter' in filter ? filter.filter : undefined,
        minRelevance: request.ranking_options?.score_threshold,
        signal: call.disconnectSignal(),
      });
      return {
        status: 200,
        body: {
          object: 'vector_store.search_results.page',
          search_query: request.query,
          data: hits.map((hit) => ({
            file_id: hit.link.fileId,
            filename: hit.link.filename,
            score: Math.round(fusedRelevance(hit.score) * 10_000) / 10_000,
            attributes: hit.link.attributes,
            content: [{ type: 'text' as const, text: hit.text }],
            chunk_id: hit.chunkId,
            page: hit.page,
            char_start: hit.charStart,
            char_end: hit.charEnd,
          })),
          has_more: false,
          next_page: null,
        },
      };
    },
  };
}
