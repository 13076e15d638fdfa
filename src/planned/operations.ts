import { AppError } from '../errors/index.js';
import type { Operation, OperationId, Operations } from '../http/index.js';

/** Operations whose capability comes later answer 503 after authentication, limits and validation. */
const unavailable =
  <K extends OperationId>(what: string): Operation<K> =>
  () => {
    throw new AppError('SERVICE_UNAVAILABLE', `${what} is not available on this server yet`);
  };

type MemoryOperationId =
  | 'listMemories'
  | 'createMemory'
  | 'deleteUserMemories'
  | 'updateMemory'
  | 'deleteMemory'
  | 'searchMemories';

/**
 * The contract's operations whose capability is not built yet (memory). Each leaves this file when its
 * capability folder lands with the real operations.
 */
export function plannedOperations(): Operations<MemoryOperationId> {
  return {
    listMemories: unavailable('Memory'),
    createMemory: unavailable('Memory'),
    deleteUserMemories: unavailable('Memory'),
    updateMemory: unavailable('Memory'),
    deleteMemory: unavailable('Memory'),
    searchMemories: unavailable('Memory'),
  };
}
