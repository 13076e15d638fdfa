/** OpenAI's Responses API: a second wire format over the chat pipeline, with pvai's capabilities as built-in tools. */
export { BackgroundResponses } from './background/background.js';
export { type ResponsesCapability, responsesCapability } from './capability.js';
export { ResponseCompactor } from './compact.js';
export type { EventSink, ResponseEvent } from './events.js';
export { isTerminalEvent, ResponseEvents, sseSink, terminalEventType } from './events.js';
export { newId, readInput, referencedIds } from './input.js';
export { responseOperations } from './operations.js';
export type { PreparedResponse } from './prepare.js';
export {
  type Accounting,
  ResponseCancelledError,
  ResponsesService,
  type ResponsesServiceDeps,
  type RunOutcome,
} from './responses-service.js';
export { SqlResponseStore } from './sql-response-store.js';
export type {
  ConversationPort,
  LocalResponses,
  ResponseBody,
  ResponseStore,
  StoredItem,
  StoredResponse,
  Tenant,
} from './types.js';
export { responsesUserData } from './user-data.js';
export { RESPONSES_SOCKET_PATH, responsesSocket } from './websocket/responses-socket.js';
