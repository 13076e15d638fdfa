import { AppError } from '../errors/index.js';
import { json, type OperationHandlers, requirePrincipal } from '../http/handler.js';
import type { Services } from '../http/services.js';
import { isModelId, MODEL_IDS, MODELS, modelResource } from './catalog.js';

export function modelHandlers(services: Services): OperationHandlers {
  return {
    listModels: (_c, ctx) => {
      const rules = services.config.tiers[requirePrincipal(ctx).account.tier];
      json(ctx, 200, { object: 'list', data: MODEL_IDS.map((id) => modelResource(MODELS[id], rules)) });
    },
    getModel: (c, ctx) => {
      const rules = services.config.tiers[requirePrincipal(ctx).account.tier];
      const id = String(c.request.params.model_id);
      if (!isModelId(id)) throw new AppError('NOT_FOUND', `No model ${id}`, { model: id });
      json(ctx, 200, modelResource(MODELS[id], rules));
    },
  };
}
