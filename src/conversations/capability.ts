import type { Clock } from '../clock/index.js';
import type { ResponseStore } from '../responses/index.js';
import type { Db } from '../storage/index.js';
import type { UserDataSection } from '../users/index.js';
import { ConversationService } from './conversation-service.js';
import { conversationOperations } from './operations.js';
import { SqlConversationStore } from './sql-conversation-store.js';
import { conversationsUserData } from './user-data.js';

export interface ConversationsCapability {
  name: 'conversations';
  /** The service, which is also the responses' `ConversationPort`. */
  service: ConversationService;
  operations: ReturnType<typeof conversationOperations>;
  userData: UserDataSection<'conversations'>;
}

/** The Conversations API on the service's database: its store, service, operations and end-user data section. */
export function conversationsCapability(deps: {
  db: Db;
  responses: Pick<ResponseStore, 'items'>;
  clock: Clock;
}): ConversationsCapability {
  const store = new SqlConversationStore(deps.db);
  const service = new ConversationService({ store, responses: deps.responses, clock: deps.clock });
  return {
    name: 'conversations',
    service,
    operations: conversationOperations({ conversations: service }),
    userData: conversationsUserData(store),
  };
}
