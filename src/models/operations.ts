import { AppError } from '../errors/index.js';
import { type Operations, requirePrincipal } from '../http/index.js';
import { isModelId, MODEL_IDS, type ModelId } from '../kernel/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { MODELS, modelResource, type RouteLimits } from './catalog.js';

/**
 * The four PV models, each marked available or not for the caller's tier, with the context window and answer
 * budget of the route it takes (LlamaIndex and LangChain read them to size prompts).
 */
export function modelOperations(
  tiers: TierPolicy,
  limitsOf: (model: ModelId) => RouteLimits,
): Operations<'listModels' | 'getModel'> {
  const resource = (id: ModelId, account: Parameters<TierPolicy['allowsModel']>[0]) =>
    modelResource(MODELS[id], tiers.allowsModel(account, id), limitsOf(id));
  return {
    listModels: (_request, call) => {
      const { account } = requirePrincipal(call);
      return { status: 200, body: { object: 'list', data: MODEL_IDS.map((id) => resource(id, account)) } };
    },
    getModel: ({ params }, call) => {
      const { account } = requirePrincipal(call);
      const id = params.model_id;
      if (!isModelId(id)) throw new AppError('NOT_FOUND', `No model ${id}`, { model: id });
      return { status: 200, body: resource(id, account) };
    },
  };
}
