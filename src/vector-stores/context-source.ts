import { type ContextContribution, type ContextSource, lastUserText } from '../chat/index.js';
import type { Principal } from '../kernel/index.js';
import type { VectorStoreRecord } from './types.js';
import type { VectorStoreService } from './vector-store-service.js';

/** The contract's default rag_k. */
const DEFAULT_RAG_K = 5;

/**
 * `use_rag` with `vector_store_ids` (chat's field, or Responses' `file_search.vector_store_ids`): the best rag_k
 * chunks of those stores instead of the end user's documents, as numbered sources. A citation names the file
 * (`document_id` its file id, `title` its filename) with the chunk's page and span in the file's extracted text.
 * The version is the stores' document versions: an attach, a detach or new attributes change the cache key.
 */
export function vectorStoresContextSource(stores: VectorStoreService): ContextSource {
  const named = (principal: Principal, ids: readonly string[]): Promise<VectorStoreRecord[]> =>
    stores.usable({ accountId: principal.account.id, userId: principal.key.userId }, ids, 'vector_store_ids');
  return {
    name: 'vector_stores',
    applies: (request) => request.use_rag === true && (request.vector_store_ids?.length ?? 0) > 0,
    version: async (principal, request) => stores.version(await named(principal, request.vector_store_ids ?? [])),
    async contribute(principal, request, signal): Promise<ContextContribution> {
      const query = lastUserText(request);
      if (!query.trim()) return { passages: [] };
      const hits = await stores.search(
        await named(principal, request.vector_store_ids ?? []),
        [query],
        request.rag_k ?? DEFAULT_RAG_K,
        { filter: request.rag_filter, minRelevance: request.rag_min_score, signal },
      );
      return {
        passages: hits.map((hit) => ({
          text: hit.text,
          citation: {
            source: 'document',
            document_id: hit.link.fileId,
            chunk_id: hit.chunkId,
            title: hit.link.filename,
            snippet: hit.text,
            score: hit.score,
            page: hit.page,
            char_start: hit.charStart,
            char_end: hit.charEnd,
          },
        })),
      };
    },
  };
}
