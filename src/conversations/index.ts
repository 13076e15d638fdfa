/**
 * OpenAI's Conversations API: conversations of an account's end users, whose items a response continues from
 * (`conversation`, through the `ConversationPort` the service implements) and to which it appends its own.
 */
export { type ConversationsCapability, conversationsCapability } from './capability.js';
export { ConversationService, type ConversationServiceDeps } from './conversation-service.js';
export { conversationOperations } from './operations.js';
export { SqlConversationStore } from './sql-conversation-store.js';
export type { ConversationStore } from './types.js';
export { conversationsUserData } from './user-data.js';
