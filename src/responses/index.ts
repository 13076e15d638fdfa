/** OpenAI's Responses API: a second wire format over the chat pipeline, with pvai's capabilities as built-in tools. */
export { responseOperations } from './operations.js';
export { ResponsesService, type ResponsesServiceDeps } from './responses-service.js';
export { SqlResponseStore } from './sql-response-store.js';
export type { ResponseStore } from './types.js';
export { responsesUserData } from './user-data.js';
