/** Persistent memory per end user: facts stored, extracted from conversations, and offered to the chat. */

export { memoryCapability } from './capability.js';
export { HASH_DIMS, lexicalFeatures } from './extraction/features.js';
export { STATEMENT_CLASSES } from './extraction/kinds.js';
export { StatementExtractor } from './extraction/statement-extractor.js';
export { softmax } from './extraction/statement-model.js';
export { statementsOf } from './extraction/statements.js';
export { thirdPerson } from './extraction/third-person.js';
export { extractorFor } from './extractor-for.js';
export { MemoryService } from './memory-service.js';
export { SqlMemoryStore } from './sql-memory-store.js';
export type { Extraction, FactExtractor } from './types.js';
