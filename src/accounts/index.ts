export { AccountService, type CreatedKey } from './account-service.js';
export { hashApiKey, isWellFormedApiKey, KEY_PREFIX, secretsEqual } from './api-key.js';
export { SqlAccountStore } from './sql-account-store.js';
export type { Account, AccountStore, ApiKeyRecord, ChargeResult, Principal } from './types.js';
