/** OpenAI's Responses API: a second wire format over the chat pipeline, with pvai's capabilities as built-in tools. */
export { responsesCapability } from './capability.js';
export { newId, readInput, referencedIds } from './input.js';
export type { McpSession, McpToolInfo } from './mcp-toolbox.js';
export { SqlResponseStore } from './sql-response-store.js';
export type {
  ConversationPort,
  ResponseStore,
  StoredItem,
  Tenant,
} from './types.js';
