/**
 * OpenAI's Conversations API: conversations of an account's end users, whose items a response continues from
 * (`conversation`, through the `ConversationPort` the service implements) and to which it appends its own.
 */
export { conversationsCapability } from './capability.js';
