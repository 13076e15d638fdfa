/** Persistent memory per end user: facts stored, extracted from conversations, and offered to the chat. */
export { MEMORY_K, memoryContextSource } from './context-source.js';
export { extractorFor } from './extractor-for.js';
export { EXTRACTION_RESPONSE_FORMAT, LlmExtractor } from './llm-extractor.js';
export { memoryKindOf } from './memory-index.js';
export { EXTRACTION_TIMEOUT_MS, MemoryService, type MemoryServiceDeps, MIN_SIMILARITY } from './memory-service.js';
export { memoryBody, memoryOperations } from './operations.js';
export { type Decision, reconcile } from './reconcile.js';
export { RuleBasedExtractor } from './rule-extractor.js';
export { SqlMemoryStore } from './sql-memory-store.js';
export type { CandidateFact, Extraction, FactExtractor, MemoryRecord, MemoryStore } from './types.js';
