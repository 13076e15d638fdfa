import type { ChatCompletionRequest, ContextContribution, ContextSource } from '../chat/index.js';
import type { Principal } from '../kernel/index.js';
import type { RagService } from './rag-service.js';

/** The contract's default rag_k. */
const DEFAULT_RAG_K = 5;

/** The retrieval query: the conversation's last user message (what the answer is about). */
function lastUserText(request: ChatCompletionRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message?.role === 'user' && typeof message.content === 'string') return message.content;
  }
  return '';
}

/**
 * `use_rag: true`: the best rag_k chunks of the caller's end user's documents, as numbered sources
 * (the prompt assembly numbers them and keeps only what fits the budget). A citation's snippet is the
 * chunk's whole text, so it is always an exact substring of the chunk, and its span locates it in the
 * document. The version is the user's document version: any upload, indexing step or deletion changes
 * the cache key, so a cached answer never cites a deleted document.
 */
export function ragContextSource(rag: RagService): ContextSource {
  const tenant = (principal: Principal, request: ChatCompletionRequest) => ({
    accountId: principal.account.id,
    userId: request.user_id,
  });
  return {
    name: 'documents',
    applies: (request) => request.use_rag === true,
    version: async (principal, request) => String(await rag.version(tenant(principal, request))),
    async contribute(principal, request, signal): Promise<ContextContribution> {
      const query = lastUserText(request);
      if (!query.trim()) return { passages: [] };
      const matches = await rag.search(tenant(principal, request), query, request.rag_k ?? DEFAULT_RAG_K, signal);
      return {
        passages: matches.map((m) => ({
          text: m.text,
          citation: {
            source: 'document',
            document_id: m.documentId,
            chunk_id: m.id,
            title: m.title,
            snippet: m.text,
            score: m.score,
            page: m.page,
            char_start: m.charStart,
            char_end: m.charEnd,
          },
        })),
      };
    },
  };
}
