import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { TierPolicy } from '../tiers/index.js';
import { ChatService, type ChatServiceDeps } from './chat-service.js';
import type { LocalModelSupervisor } from './local-model-supervisor.js';
import { chatOperations } from './operations.js';
import { routeFacts } from './route-facts.js';

type ChatDeps = Pick<ChatServiceDeps, 'router' | 'cache' | 'credits' | 'context' | 'clock' | 'price'> & {
  config: Pick<Config, 'routing' | 'localEngine' | 'cache'>;
  logger: Logger;
  tiers: TierPolicy;
  localModel: LocalModelSupervisor;
  factories: Parameters<LocalModelSupervisor['start']>[0];
};

/**
 * Chat completions: the pipeline over the router, the response cache and the context sources the other
 * capabilities plug in. Its start loads the local model: last, when the rest is up.
 */
export function chatCapability({ config, logger, tiers, localModel, factories, ...deps }: ChatDeps) {
  const routes = routeFacts(config);
  const service = new ChatService({
    ...deps,
    warn: (err, message) => logger.warn({ err }, message),
    cacheTtlMs: config.cache.ttlSeconds * 1000,
    budget: (request) => routes.budget(request.model, request),
    unavailableReason: (model) => localModel.unavailableReason(model),
    readsImages: routes.readsImages,
    defaultTemperature: routes.defaultTemperature,
  });
  return {
    name: 'chat',
    service,
    routeFacts: routes,
    operations: chatOperations({ chat: service, tiers }),
    start: () => localModel.start(factories),
  };
}
