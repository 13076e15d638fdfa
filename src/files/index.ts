export { filesCapability } from './capability.js';
export type { FileService } from './file-service.js';
export { viewerOf } from './operations.js';
export { ownerScope } from './sql-file-store.js';
export type { FileRecord, ListPage, Owner } from './types.js';
