import { endUserOf, type Operations, requirePrincipal } from '../http/index.js';
import { checkKeyModel, type ModelNames } from '../tiers/index.js';
import type { EmbeddingService } from './embedding-service.js';
import { embeddingListBody, readInput } from './wire.js';

/**
 * POST /z1/embeddings: OpenAI's request read into texts, the service (bounds, credits, the model), and OpenAI's
 * answer. Every tier may embed (docs/decisions.md), so no tier rule is asked; `user` changes nothing of the answer and
 * names the end user on the request's usage row.
 */
export function embeddingOperations(deps: {
  embeddings: EmbeddingService;
  names: ModelNames;
}): Operations<'createEmbedding'> {
  return {
    createEmbedding: async ({ body }, call) => {
      const principal = requirePrincipal(call);
      // PV-EMBED, or an alias of it (`text-embedding-3-small`, when configured); any other name is 400.
      call.usage.model = deps.names.embedding(body.model);
      checkKeyModel(principal.key, call.usage.model);
      // A key bound to an end user names them on the row (and refuses another); otherwise `user`, if any.
      call.usage.userId =
        body.user === undefined && principal.key.userId === null ? undefined : endUserOf(principal, body.user, 'user');
      const input = readInput(body.input);
      const result = await deps.embeddings.embed(
        principal,
        { ...input, dimensions: body.dimensions },
        call.disconnectSignal(),
      );
      call.usage.promptTokens = result.tokens;
      call.usage.credits = result.credits;
      return {
        status: 200,
        headers: { 'X-Credits-Charged': String(result.credits) },
        body: embeddingListBody(result, body.encoding_format ?? 'float'),
      };
    },
  };
}
