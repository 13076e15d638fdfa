/** OpenAI's Conversations API (placeholder: its operations are being built). */
import { AppError } from '../errors/index.js';
import type { Operations } from '../http/index.js';
import type { UserDataSection } from '../users/index.js';

type ConversationOperationId =
  | 'createConversation'
  | 'getConversation'
  | 'updateConversation'
  | 'deleteConversation'
  | 'listConversationItems'
  | 'createConversationItems'
  | 'getConversationItem'
  | 'deleteConversationItem';

const pending = async (): Promise<never> => {
  throw new AppError('NOT_FOUND', 'No such endpoint');
};

export function conversationOperations(): Operations<ConversationOperationId> {
  return {
    createConversation: pending,
    getConversation: pending,
    updateConversation: pending,
    deleteConversation: pending,
    listConversationItems: pending,
    createConversationItems: pending,
    getConversationItem: pending,
    deleteConversationItem: pending,
  };
}

export function conversationsUserData(): UserDataSection<'conversations'> {
  return {
    name: 'conversations',
    async *export() {},
    erase: async () => 0,
  };
}
