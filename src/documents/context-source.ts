import {
  type ChatCompletionRequest,
  type ContextContribution,
  type ContextSource,
  lastUserText,
} from '../chat/index.js';
import type { Principal } from '../kernel/index.js';
import type { DocumentService } from './document-service.js';
import { matchBody } from './operations.js';

/** The contract's default rag_k. */
const DEFAULT_RAG_K = 5;

/**
 * `use_rag: true`: the best rag_k chunks of the caller's end user's documents, as numbered sources
 * (the prompt assembly numbers them and keeps only what fits the budget). A citation's snippet is the
 * chunk's whole text, so it is always an exact substring of the chunk, and its span locates it in the
 * document. The version is the user's document version: any upload, indexing step or deletion changes
 * the cache key, so a cached answer never cites a deleted document.
 */
export function documentsContextSource(documents: DocumentService): ContextSource {
  const tenant = (principal: Principal, request: ChatCompletionRequest) => ({
    accountId: principal.account.id,
    userId: request.user_id,
  });
  return {
    name: 'documents',
    // Named vector stores take the documents' place (vector-stores/context-source.ts).
    applies: (request) => request.use_rag === true && (request.vector_store_ids?.length ?? 0) === 0,
    version: async (principal, request) => String(await documents.version(tenant(principal, request))),
    async contribute(principal, request, signal): Promise<ContextContribution> {
      const query = lastUserText(request);
      if (!query.trim()) return { passages: [] };
      const matches = await documents.search(
        tenant(principal, request),
        query,
        request.rag_k ?? DEFAULT_RAG_K,
        signal,
        {
          filter: request.rag_filter,
          minRelevance: request.rag_min_score,
        },
      );
      return {
        // The citation is the search operation's match, field for field (`matchBody`), marked as a document's.
        passages: matches.map((m) => ({ text: m.text, citation: { source: 'document', ...matchBody(m) } })),
      };
    },
  };
}
