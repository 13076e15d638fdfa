import { AppError } from '../errors/index.js';
import { bodyOf, type OperationHandlers, requirePrincipal } from '../http/handler.js';
import type { Services } from '../http/services.js';
import { isModelId, MODELS } from '../models/catalog.js';
import { type ChatRequestShape, checkMessages, checkTierAllowsChat } from './policy.js';

export function chatHandlers(services: Services): OperationHandlers {
  return {
    createChatCompletion: async (c, ctx) => {
      const { account } = requirePrincipal(ctx);
      const request = bodyOf<ChatRequestShape>(c);
      checkMessages(request.messages);
      checkTierAllowsChat(request, account, services.config.tiers[account.tier]);
      ctx.state.usage.model = request.model;
      const cost = isModelId(request.model) ? MODELS[request.model].creditsPerRequest : 0;
      const balance = (await services.accounts.store.getAccount(account.id))?.credits ?? 0;
      if (balance < cost) {
        throw new AppError(
          'INSUFFICIENT_CREDITS',
          `${request.model} costs ${cost} credits; the balance is ${balance}`,
          {
            required: cost,
            balance,
          },
        );
      }
      throw new AppError('SERVICE_UNAVAILABLE', 'Chat completions are not available on this server yet');
    },
  };
}
