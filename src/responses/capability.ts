import type { Operations, UpgradeRoute } from '../http/index.js';
import type { TierPolicy } from '../tiers/index.js';
import type { UserDataSection } from '../users/index.js';
import { type BackgroundDeps, BackgroundResponses } from './background/background.js';
import { ResponseCompactor } from './compact.js';
import { responseOperations } from './operations.js';
import { ResponsesService, type ResponsesServiceDeps } from './responses-service.js';
import type { ResponseStore } from './types.js';
import { responsesUserData } from './user-data.js';
import { responsesSocket } from './websocket/responses-socket.js';

export interface ResponsesCapabilityDeps
  extends Omit<ResponsesServiceDeps, 'store'>,
    Omit<BackgroundDeps, 'responses' | 'store'> {
  store: ResponseStore;
  tiers: TierPolicy;
}

export interface ResponsesCapability {
  name: 'responses';
  service: ResponsesService;
  /** The queue and worker of background responses: started once the engines are, closed first. */
  background: BackgroundResponses;
  operations: Operations<
    | 'createResponse'
    | 'getResponse'
    | 'deleteResponse'
    | 'listResponseInputItems'
    | 'cancelResponse'
    | 'compactResponse'
  >;
  /** WebSocket mode of `/z1/responses`, for HttpPorts.upgrades. */
  upgrades: UpgradeRoute<'createResponse'>;
  /** The `responses` section of an end user's export and erase. */
  userData: UserDataSection<'responses'>;
  /** The background worker starts once the engines are up, and stops first. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The Responses API assembled: one service that every way of answering runs through (JSON, SSE, WebSocket, the
 * background queue), the compactor, and the operations and socket route the HTTP layer is given.
 */
export function responsesCapability(deps: ResponsesCapabilityDeps): ResponsesCapability {
  const service = new ResponsesService(deps);
  const background = new BackgroundResponses({ ...deps, responses: service });
  return {
    name: 'responses',
    service,
    background,
    operations: responseOperations({
      responses: service,
      compactor: new ResponseCompactor(deps),
      store: deps.store,
      tiers: deps.tiers,
      background,
    }),
    upgrades: responsesSocket({ responses: service, tiers: deps.tiers }),
    userData: responsesUserData(deps.store, background),
    start: () => background.start(),
    close: () => background.close(),
  };
}
