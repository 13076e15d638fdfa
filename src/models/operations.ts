import { AppError } from '../errors/index.js';
import { type Operations, requirePrincipal } from '../http/index.js';
import { isModelId, MODEL_IDS } from '../kernel/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { MODELS, modelResource } from './catalog.js';

/** The four PV models, each marked available or not for the caller's tier. */
export function modelOperations(tiers: TierPolicy): Operations<'listModels' | 'getModel'> {
  return {
    listModels: (_request, call) => {
      const { account } = requirePrincipal(call);
      const data = MODEL_IDS.map((id) => modelResource(MODELS[id], tiers.allowsModel(account, id)));
      return { status: 200, body: { object: 'list', data } };
    },
    getModel: ({ params }, call) => {
      const { account } = requirePrincipal(call);
      const id = params.model_id;
      if (!isModelId(id)) throw new AppError('NOT_FOUND', `No model ${id}`, { model: id });
      return { status: 200, body: modelResource(MODELS[id], tiers.allowsModel(account, id)) };
    },
  };
}
