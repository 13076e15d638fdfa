import { AppError } from '../errors/index.js';
import { type Operations, requirePrincipal, type Schema } from '../http/index.js';
import { EMBEDDING_MODEL_ID, isModelId, MODEL_IDS, type ModelId } from '../kernel/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { type EmbeddingLimits, embeddingModelResource, MODELS, modelResource, type RouteLimits } from './catalog.js';

/**
 * The four PV models, each marked available or not for the caller's tier, with the context window and answer
 * budget of the route it takes (LlamaIndex and LangChain read them to size prompts) and `vision` when it reads
 * images; then PV-EMBED when the
 * server has an embedding model (`embedding` answers its limits, or undefined without one).
 */
export function modelOperations(
  tiers: TierPolicy,
  limitsOf: (model: ModelId) => RouteLimits,
  embedding: () => Promise<EmbeddingLimits | undefined> = async () => undefined,
): Operations<'listModels' | 'getModel'> {
  const resource = (id: ModelId, account: Parameters<TierPolicy['allowsModel']>[0]) =>
    modelResource(MODELS[id], tiers.allowsModel(account, id), limitsOf(id));
  const embeddingResource = async (): Promise<Schema<'Model'> | undefined> => {
    const limits = await embedding();
    return limits ? embeddingModelResource(limits) : undefined;
  };
  return {
    listModels: async (_request, call) => {
      const { account } = requirePrincipal(call);
      const embedder = await embeddingResource();
      const data = [...MODEL_IDS.map((id) => resource(id, account)), ...(embedder ? [embedder] : [])];
      return { status: 200, body: { object: 'list', data } };
    },
    getModel: async ({ params }, call) => {
      const { account } = requirePrincipal(call);
      const id = params.model_id;
      if (isModelId(id)) return { status: 200, body: resource(id, account) };
      const embedder = id === EMBEDDING_MODEL_ID ? await embeddingResource() : undefined;
      if (!embedder) throw new AppError('NOT_FOUND', `No model ${id}`, { model: id });
      return { status: 200, body: embedder };
    },
  };
}
