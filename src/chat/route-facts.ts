import { type Config, routeReadsImages, routeTemperature } from '../config/index.js';
import { routeBudget } from './budget.js';
import type { PromptBudget } from './context/index.js';
import type { ChatCompletionRequest } from './request.js';

/** What a model's route says of it (docs/routing.md), read from the configuration once for chat, responses and models. */
export interface RouteFacts {
  /** The routed model's context window and the tokens kept for the answer of this request. */
  budget(model: string, request?: Pick<ChatCompletionRequest, 'max_tokens'>): PromptBudget;
  /** Whether every target of the route reads images. */
  readsImages(model: string): boolean;
  /** The temperature of a request naming none; undefined: the contract's default. */
  defaultTemperature(model: string): number | undefined;
}

export function routeFacts(config: Pick<Config, 'routing' | 'localEngine'>): RouteFacts {
  const targets = (model: string) => config.routing[model] ?? [];
  return {
    budget: (model, request = {}) => routeBudget(targets(model), request, config.localEngine.contextSize),
    readsImages: (model) => routeReadsImages(targets(model)),
    defaultTemperature: (model) => routeTemperature(targets(model)),
  };
}
