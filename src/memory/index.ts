/** Persistent memory per end user: facts stored, extracted from conversations, and offered to the chat. */
export { memoryContextSource } from './context-source.js';
export { HASH_DIMS, lexicalFeatures } from './extraction/features.js';
export { STATEMENT_CLASSES } from './extraction/kinds.js';
export { StatementExtractor } from './extraction/statement-extractor.js';
export { softmax } from './extraction/statement-model.js';
export { statementsOf } from './extraction/statements.js';
export { thirdPerson } from './extraction/third-person.js';
export { SqlExtractionQueue } from './extraction-queue.js';

export { extractorFor } from './extractor-for.js';

export { SqlMemoryExport } from './memory-export.js';
export { memoryKindOf } from './memory-index.js';
export { MemoryService } from './memory-service.js';
export { memoryOperations } from './operations.js';

export { SqlMemoryStore } from './sql-memory-store.js';
export type { Extraction, FactExtractor } from './types.js';
export { memoryUserData } from './user-data.js';
